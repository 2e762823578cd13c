"""The Dockerfile, checked without a Docker engine (none runs on our machines).

* its build stage runs the Makefile's own targets (make -n knows each one) on the images the README names,
  and installs the packages tests/deps.sh names for a build;
* its runtime stage installs a package for every shared library build/streamlab needs (readelf NEEDED, by
  soname), and every other library ldd lists comes in through one of those (their own NEEDED);
* non-root user, /data volume, port 8080, the listen address, NVIDIA capabilities, a HEALTHCHECK on
  /api/health (run here against a live server), and a .dockerignore that keeps builds and databases out.
"""

import os
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import check

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCKERFILE = os.path.join(REPO, "Dockerfile")
BUILD_IMAGE = "nvidia/cuda:13.0.0-devel-ubuntu24.04"
RUNTIME_IMAGE = "nvidia/cuda:13.0.0-runtime-ubuntu24.04"

# Ubuntu 24.04 (noble) package of each soname the binary may link (libc6's are the C library itself).
LIBC6 = {"libc.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2",
         "ld-linux-aarch64.so.1", "linux-vdso.so.1"}
NOBLE_PACKAGE = {
    "libgnutls.so.30": "libgnutls30t64",
    "libjansson.so.4": "libjansson4",
    "libsqlite3.so.0": "libsqlite3-0",
    "libgomp.so.1": "libgomp1",
    "libstdc++.so.6": "libstdc++6",
    "libgcc_s.so.1": "libgcc-s1",
    "libmicrohttpd.so.12": "libmicrohttpd12t64",
}


def stages():
    """[(from_image, [instruction lines])] with continuation lines joined."""
    text = open(DOCKERFILE).read()
    lines, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if s.endswith("\\"):
            cur += s[:-1].strip() + " "
            continue
        lines.append((cur + s).strip())
        cur = ""
    out = []
    for line in lines:
        if line.upper().startswith("FROM "):
            out.append((line.split()[1], []))
        elif out:
            out[-1][1].append(line)
    return out


def runs(stage):
    return [line[4:] for line in stage[1] if line.upper().startswith("RUN ")]


def apt_packages(stage):
    pkgs = []
    for run in runs(stage):
        for part in run.split("&&"):
            words = shlex.split(part)
            if words[:2] == ["apt-get", "install"]:
                pkgs += [w for w in words[2:] if not w.startswith("-")]
    return pkgs


def test_dockerfile_has_two_stages_on_the_cuda_13_images():
    st = stages()
    check([s[0] for s in st] == [BUILD_IMAGE, RUNTIME_IMAGE], [BUILD_IMAGE, RUNTIME_IMAGE], [s[0] for s in st],
          "FROM lines")


def test_build_steps_are_the_makefiles_targets():
    build = stages()[0]
    targets = []
    for run in runs(build):
        for part in run.split("&&"):
            words = shlex.split(part)
            if words and words[0] == "make":
                targets += [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    check(targets, "make targets in the build stage", targets, "Dockerfile RUN make")
    for t in targets:
        p = subprocess.run(["make", "-n", "-C", REPO, t], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"the Makefile knows {t}", p.stderr[-800:], f"make -n {t}")
    check({"build/streamlab", "web-vendor"} <= set(targets), "build/streamlab and web-vendor (what `make all` builds)",
          targets, "Dockerfile build targets")
    deps = open(os.path.join(REPO, "tests", "deps.sh")).read()
    need = re.search(r'build_need="([^"]*)"', deps).group(1).split()
    build_needs = [p for p in need if p.endswith("-dev") or p in ("gcc", "make", "pkg-config", "nodejs", "npm")]
    missing = [p for p in build_needs if p not in apt_packages(build)]
    check(not missing, "every build package of tests/deps.sh", missing, "build stage apt-get install")


def elf_needed(path):
    p = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return []
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)


def the_binary():
    """The release build the image builds (a sanitizer build links libasan: not what ships)."""
    path = os.path.join(REPO, "build", "streamlab")
    if not os.access(path, os.X_OK):
        pytest.skip("build/streamlab is not built")
    if not shutil.which("readelf") or not shutil.which("ldd"):
        pytest.skip("readelf and ldd are needed")
    return path


def test_runtime_libraries_cover_the_binarys_shared_libraries():
    binary = the_binary()
    runtime = stages()[1]
    installed = set(apt_packages(runtime))
    direct = elf_needed(binary)
    check(direct, "NEEDED entries", direct, f"readelf -d {binary}")
    for soname in direct:
        if soname in LIBC6:
            continue
        check(soname in NOBLE_PACKAGE, f"{soname} in this test's soname -> Ubuntu 24.04 package table",
              sorted(NOBLE_PACKAGE), "a new shared library: add its package to the Dockerfile and the table")
        check(NOBLE_PACKAGE[soname] in installed, f"{NOBLE_PACKAGE[soname]} (for {soname}) in the runtime stage",
              sorted(installed), "runtime stage apt-get install")
    # every library ldd lists comes from libc6, a covered one, or (transitively) a covered one's NEEDED
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=60).stdout
    paths = dict(re.findall(r"^\s*(\S+)\s+=>\s+(\S+)", ldd, re.M))
    reached, todo = set(), [s for s in direct if s not in LIBC6]
    while todo:
        soname = todo.pop()
        if soname in reached:
            continue
        reached.add(soname)
        if soname in paths:
            todo += [s for s in elf_needed(paths[soname]) if s not in LIBC6]
    for soname in paths:
        check(soname in LIBC6 or soname in reached, f"{soname} from libc6 or pulled by a covered library",
              sorted(reached), "ldd build/streamlab")


def test_runtime_stage_shape():
    runtime = stages()[1]
    text = "\n".join(runtime[1])
    users = [line.split()[1] for line in runtime[1] if line.upper().startswith("USER ")]
    check(users and users[-1] not in ("root", "0"), "a non-root USER", users, "runtime USER")
    check(re.search(r'^VOLUME \[?"?/data"?\]?', text, re.M), "VOLUME /data", text, "runtime VOLUME")
    check(re.search(r"^EXPOSE 8080\b", text, re.M), "EXPOSE 8080", text, "runtime EXPOSE")
    for env in ("STREAMLAB_LISTEN=0.0.0.0:8080", "STREAMLAB_DB=/data/streamlab.db",
                "NVIDIA_DRIVER_CAPABILITIES=compute,utility"):
        check(env in text, env, text, "runtime ENV")
    check(re.search(r"^HEALTHCHECK .*CMD .*/api/health", text, re.M), "a HEALTHCHECK on /api/health", text,
          "runtime HEALTHCHECK")
    check(re.search(r'^CMD \["serve"\]', text, re.M) and re.search(r'^ENTRYPOINT \["streamlab"\]', text, re.M),
          'ENTRYPOINT ["streamlab"], CMD ["serve"]', text, "runtime command")
    copies = [line for line in runtime[1] if line.upper().startswith("COPY --FROM=BUILD")]
    check(any("/src/build/streamlab" in c for c in copies), "the binary make built", copies, "runtime COPY")


def test_healthcheck_command_answers_on_a_live_server(make_server):
    if not shutil.which("curl"):
        pytest.skip("curl is not installed here")
    srv = make_server(name="health")
    line = next(line for line in stages()[1][1] if line.upper().startswith("HEALTHCHECK "))
    cmd = line[line.index("CMD ") + 4:]
    env = dict(os.environ, STREAMLAB_LISTEN=f"127.0.0.1:{srv.port}")
    env.pop("STREAMLAB_TOKEN", None)
    ok = subprocess.run(["sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=60)
    check(ok.returncode == 0, "exit 0 against a live server", (ok.returncode, ok.stderr), f"HEALTHCHECK {cmd}")
    srv.stop()
    down = subprocess.run(["sh", "-c", cmd], env=env, capture_output=True, text=True, timeout=60)
    check(down.returncode != 0, "non-zero when the server is down", down.returncode, f"HEALTHCHECK {cmd}")


def test_dockerignore_keeps_builds_and_databases_out():
    path = os.path.join(REPO, ".dockerignore")
    check(os.path.exists(path), ".dockerignore", None, "the build context")
    patterns = [p.strip() for p in open(path) if p.strip() and not p.startswith("#")]
    for want in ("build", "web/node_modules", "**/*.db", ".git"):
        check(want in patterns, want, patterns, ".dockerignore")
    for needed in ("tests", "migrations", "web", "Makefile"):
        check(needed not in patterns, f"{needed} kept (the build needs it)", patterns, ".dockerignore")
