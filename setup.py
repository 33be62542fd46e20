"""Builds goprep's Go extension with gopy; all metadata lives in pyproject.toml.

The one build step: `go tool gopy build` (gopy pinned as a tool in go.mod) generates the CPython
binding for gomod/binding and compiles it with cgo; this command copies the extension and its
Python wrappers into goprep/_ext. Nothing generated is committed or edited by hand.
"""

from __future__ import annotations

import glob
import os
import platform
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildGo(build_ext):
    def build_extension(self, ext: Extension) -> None:
        go = shutil.which("go")
        if go is None:
            raise RuntimeError("goprep needs the Go toolchain (1.26 or newer) on PATH to build: https://go.dev/dl/")
        work = os.path.join(ROOT, "_build")  # inside the module, so gopy's `go build` finds go.mod
        gen = os.path.join(work, "gopy")
        bindir = os.path.join(work, "bin")
        shutil.rmtree(gen, ignore_errors=True)
        os.makedirs(bindir, exist_ok=True)
        env = dict(os.environ)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.setdefault("CGO_ENABLED", "1")
        simd_ok = platform.machine().lower() in ("x86_64", "amd64")
        if simd_ok and "GOEXPERIMENT" not in env and not env.get("GOPREP_NO_SIMD"):
            # Go 1.26's simd/archsimd: AVX2 / AVX-512 row kernels, picked at run time by CPU feature.
            # The pure-Go kernels stay the fallback and the reference; GOPREP_NO_SIMD=1 builds only them.
            env["GOEXPERIMENT"] = "simd"
        # gopy formats its output with goimports, which it expects on PATH.
        self._run([go, "build", "-o", bindir + os.sep, "golang.org/x/tools/cmd/goimports"], env)
        self._run(
            [go, "tool", "gopy", "build", f"-vm={sys.executable}", "-name=native", f"-output={gen}", "-no-make",
             "./gomod/binding"],
            env,
        )
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = glob.glob(os.path.join(gen, "_native" + suffix))
        if len(built) != 1:
            raise RuntimeError(f"gopy did not produce the extension in {gen}: {os.listdir(gen)}")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built[0], dest)
        targets = {os.path.dirname(dest)}
        if self.inplace or getattr(self, "editable_mode", False):
            # An editable install copies only the extension itself back into the source tree.
            targets.add(os.path.join(ROOT, "python", "goprep", "_ext"))
        for target in targets:
            for py in ("binding.py", "go.py"):
                shutil.copyfile(os.path.join(gen, py), os.path.join(target, py))

    def _run(self, cmd: list, env: dict) -> None:
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, cwd=ROOT, env=env, check=True)


setup(
    ext_modules=[Extension("goprep._ext._native", sources=[])],
    cmdclass={"build_ext": BuildGo},
)
