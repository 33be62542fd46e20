# The Go extension lands here at build time (setup.py's build_ext runs gopy); nothing here is
# hand-written except this file. See setup.py.
