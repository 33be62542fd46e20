"""The command line (``python -m goprep``, the ``goprep`` command) and how goprep's errors are named."""

import pickle
import re
import shutil
import subprocess
import sys
import traceback

import numpy as np
import pytest

import goprep
from goprep import __main__ as cli

# Every command's --help, as argv after "python -m goprep".
COMMANDS = [["demo"], ["bench"], ["bench", "--scale"], ["info"], ["profile"], ["serve"], ["serve-bench"]]


def _help(argv, capsys):
    """What ``python -m goprep ARGV --help`` prints, run in this process (argparse exits with 0)."""
    try:
        rc = cli.main([*argv, "--help"])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr().out
    assert rc in (0, None), (argv, rc, out)
    return out


def _options_without_help(text):
    """Option lines argparse printed bare: ``  --name VALUE`` with no help on the line or the next one
    (argparse moves a long option's help to the next, deeper-indented line)."""
    lines = text.splitlines() + [""]
    bare = []
    for line, nxt in zip(lines, lines[1:]):
        if re.match(r"^  -[-\w]+(?: [A-Z_,{}\w]+)?(?:, --[-\w]+(?: [A-Z_]+)?)?$", line) and not re.match(
            r"^ {4,}[^ -]", nxt
        ):
            bare.append(line)
    return bare


def test_version_flag_prints_the_package_version(capsys):
    for flag in ("--version", "-V"):
        assert cli.main([flag]) == 0
        assert capsys.readouterr().out == f"goprep {goprep.__version__}\n"
    r = subprocess.run([sys.executable, "-m", "goprep", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == f"goprep {goprep.__version__}\n", r.stdout + r.stderr


def test_console_script_is_the_same_main():
    """pyproject's [project.scripts] installs ``goprep`` as goprep.__main__:main; where it is installed
    for this goprep, ``goprep --version`` answers as ``python -m goprep --version`` does."""
    import pathlib

    pyproject = (pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert re.search(r'^\[project\.scripts\]\ngoprep = "goprep\.__main__:main"$', pyproject, re.M), pyproject
    exe = shutil.which("goprep")
    if exe is None:
        pytest.skip("no goprep command on PATH (goprep not pip-installed here)")
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("goprep "), r.stdout + r.stderr


def test_top_level_help_names_commands_and_flags(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for word in ("demo", "bench", "info", "profile", "serve", "serve-bench", "--version", "goprep COMMAND"):
        assert word in out, (word, out)
    assert "``" not in out and "`" not in out, out


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_help_has_no_rst_markup(argv, capsys):
    out = _help(argv, capsys)
    assert out.startswith("usage: python -m goprep " + " ".join(argv)), out
    assert "``" not in out and ":mod:" not in out and ":func:" not in out, out


@pytest.mark.parametrize("argv", [a for a in COMMANDS if a != ["profile"]], ids=" ".join)
def test_every_option_has_help(argv, capsys):
    out = _help(argv, capsys)
    assert _options_without_help(out) == [], out


def test_serve_hides_test_flags_but_still_takes_them(capsys):
    from goprep._serve.server import _parser

    hidden = ["--simulate-gpu", "--fault-every", "--fault-kind", "--fault-count", "--breaker-cooldown", "--parent-pid"]
    out = _help(["serve"], capsys)
    for flag in hidden:
        assert flag not in out, (flag, out)
    for flag in ("--host", "--port", "--preprocess", "--workers", "--model", "--topk", "--metrics-port", "--device",
                 "--num-threads", "--switch-interval", "--no-tune-malloc", "--profile", "--max-seconds"):
        assert flag in out, (flag, out)
    a = _parser().parse_args(["--simulate-gpu", "--fault-every", "7", "--fault-kind", "oom", "--fault-count", "2",
                              "--breaker-cooldown", "0.5", "--parent-pid", "1"])
    assert (a.simulate_gpu, a.fault_every, a.fault_kind, a.fault_count, a.breaker_cooldown, a.parent_pid) == (
        True, 7, "oom", 2, 0.5, 1)
    d = _parser().parse_args([])
    assert (d.simulate_gpu, d.fault_every, d.fault_kind, d.fault_count, d.breaker_cooldown, d.parent_pid) == (
        False, 0, "launch", 3, None, 0)


def test_unknown_command_fails_with_usage(capsys):
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


# -- error names -------------------------------------------------------------------------------------------

ERRORS = [getattr(goprep, name) for name in goprep._errors.__all__]


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_errors_are_named_goprep_dot_class(cls):
    assert cls.__module__ == "goprep" and getattr(goprep, cls.__name__) is cls
    e = cls("bad thing", argument="src")
    assert traceback.format_exception_only(type(e), e) == [f"goprep.{cls.__name__}: src: bad thing\n"]


@pytest.mark.parametrize("cls", ERRORS, ids=lambda c: c.__name__)
def test_errors_pickle_with_their_fields(cls):
    e = cls("bad thing", argument="size", code="too_large")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(e, protocol=protocol)
        assert b"goprep._errors" not in data
        back = pickle.loads(data)
        assert type(back) is cls
        assert (str(back), back.code, back.argument, back.detail) == (str(e), "too_large", "size", "bad thing")


def test_a_raised_error_prints_as_goprep_dot_class():
    with pytest.raises(goprep.DTypeError) as info:
        goprep.flip(np.zeros((4, 4, 3), np.int16))
    assert traceback.format_exception_only(info.type, info.value)[0].startswith("goprep.DTypeError: src: ")
    # and so does an uncaught one, in the traceback Python prints
    code = "import numpy as np, goprep; goprep.resize(np.zeros((4, 4, 3), np.uint8), (0, 2))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("goprep.ShapeError: size"), r.stderr
    assert "goprep._errors" not in r.stderr, r.stderr
