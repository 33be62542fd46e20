// Package engine is goprep's validated preprocessing plan and its CPU backend, the golden reference
// every other backend is tested against.
package engine
