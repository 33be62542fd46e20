"""The two edits made to gopy's generated output, each checked: a gopy whose output looks different
fails the build instead of shipping a wrong edit. copy_without_chdir: the loader; declare_gil_free:
the C module init (free-threaded builds), applied through gopy_vm while gopy builds."""

from __future__ import annotations

import os
import sys

from . import ROOT


def copy_without_chdir(src: str, dest: str) -> None:
    """Copy a gopy-generated loader, dropping its os.chdir calls (one of the two edits made to gopy's output).

    gopy's loader chdirs into the package directory around importing the extension. Nothing needs it
    (the import is relative), and it changes the working directory of every thread of the process
    while the extension loads, and leaves it changed when the import fails. The edit is checked: a gopy
    whose loader looks different fails the build instead of shipping the chdir."""
    with open(src) as f:
        text = f.read()
    marker = "# goprep (setup.py): gopy's change of directory removed; loading must keep the working directory"
    for call in ("os.chdir(currentdir)", "os.chdir(cwd)"):
        if text.count(call + "\n") != 1:
            raise RuntimeError(f"gopy's loader {os.path.basename(src)} no longer has one {call!r}; "
                               "update build_support/gopy_edits.py")
        text = text.replace(call + "\n", f"pass  {marker}\n")
    if "os.chdir" in text:
        raise RuntimeError(f"gopy's loader {os.path.basename(src)} still calls os.chdir; "
                           "update build_support/gopy_edits.py")
    with open(dest, "w") as f:
        f.write(text)


GIL_EDIT_MARKER = "/* goprep (setup.py): free-threaded CPython: the module declares it needs no GIL */"

# MOD_INIT of gopy v0.5.0's native.c (written by pybindgen through gopy's build.py), whole.
GOPY_MOD_INIT = """MOD_INIT(_native)
{
    PyObject *m;
    #if PY_VERSION_HEX >= 0x03000000
    m = PyModule_Create(&_native_moduledef);
    #else
    m = Py_InitModule3((char *) "_native", _native_functions, NULL);
    #endif
    if (m == NULL) {
        return MOD_ERROR;
    }
    return MOD_RETURN(m);
}
"""


def declare_gil_free(path: str) -> None:
    """Edit gopy's native.c so that on a free-threaded CPython (Py_GIL_DISABLED) the module declares
    Py_MOD_GIL_NOT_USED (the second edit made to gopy's output; gopy's issue #364 is open upstream).

    Without it, importing goprep turns the GIL back on for the whole process. Declaring it is sound:
    the C wrappers keep no state of their own, gopy's handle table is under a sync.RWMutex, the Go
    engine is tested under -race, and the Python side's shared state is audited in
    docs/perf/2026-12-03-free-threading-audit.md. The edit is checked: a native.c whose module init
    is not exactly gopy v0.5.0's fails the build. On GIL builds the added lines compile to nothing."""
    with open(path) as f:
        text = f.read()
    if text.count(GOPY_MOD_INIT) != 1:
        raise RuntimeError(f"gopy's {os.path.basename(path)} no longer has the module init setup.py edits "
                           "(MOD_INIT(_native) as in gopy v0.5.0); "
                           "update build_support/gopy_edits.py's declare_gil_free")
    if "Py_mod_gil" in text or "PyUnstable_Module_SetGIL" in text:
        raise RuntimeError(f"gopy's {os.path.basename(path)} already declares its GIL use; drop setup.py's edit")
    ret = "    return MOD_RETURN(m);\n}\n"
    edited = GOPY_MOD_INIT.replace(ret, f"""    {GIL_EDIT_MARKER}
#ifdef Py_GIL_DISABLED
    if (PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED) < 0) {{
        Py_DECREF(m);
        return MOD_ERROR;
    }}
#endif
{ret}""")
    with open(path, "w") as f:
        f.write(text.replace(GOPY_MOD_INIT, edited))


def gopy_vm(bindir: str) -> str:
    """A `python` for gopy's -vm: runs this interpreter with gopy's arguments, and after `build.py`
    (which writes native.c) applies declare_gil_free to native.c before gopy compiles it."""
    vm = os.path.join(bindir, "gopy-python")
    call = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from build_support.gopy_edits import declare_gil_free; declare_gil_free('native.c')")
    with open(vm, "w") as f:
        f.write(f"""#!/bin/sh
# goprep (setup.py, build_support/gopy_edits.py's gopy_vm): the Python gopy runs; build.py's native.c
# gets the build's checked edit (declare_gil_free).
'{sys.executable}' "$@" || exit $?
if [ "$#" = 1 ] && [ "$1" = build.py ]; then
  exec '{sys.executable}' -c "{call}" '{ROOT}'
fi
""")
    os.chmod(vm, 0o755)
    return vm

