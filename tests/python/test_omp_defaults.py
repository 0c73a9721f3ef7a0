"""OpenMP wait defaults (src/kernels/omp_defaults.c): libopenacl_ompenv.so must
initialise before libgomp reads its environment, set a short spin only when
the user chose nothing, and leave the environment as it found it once
libascendcl has loaded (children inherit nothing)."""
import os
import re
import subprocess
import sys

import acl_helpers as H

PROBE = (
    "import ctypes, sys; sys.path.insert(0, sys.argv[1]); import acl; "
    "libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p; "
    "print(libc.getenv(b'GOMP_SPINCOUNT'), libc.getenv(b'OPENACL_OMP_ENV_SET'))"
)


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "OPENACL_OMP_ENV_SET", "OPENACL_OMP_SPINCOUNT")}
    env.update(extra)
    return env


def _init_order(cmd):
    """Basenames of the libraries in the order the dynamic linker initialised them."""
    out = subprocess.run(cmd, env=_env(LD_DEBUG="files"), capture_output=True, text=True, timeout=60)
    return [os.path.basename(m) for m in re.findall(r"calling init: (\S+)", out.stderr)]


def _before(order, first, second):
    names = [n.split(".so")[0] for n in order]
    assert first in names and second in names, order
    return names.index(first) < names.index(second)


def test_python_module_sets_defaults_before_libgomp():
    order = _init_order([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import acl",
                         str(H.python_dir())])
    assert _before(order, "libopenacl_ompenv", "libgomp"), order
    assert _before(order, "libgomp", "libascendcl"), order


def test_c_program_sets_defaults_before_libgomp():
    order = _init_order([str(H.build_dir() / "bin" / "test_capi_event"), "--gtest_list_tests"])
    assert _before(order, "libopenacl_ompenv", "libgomp"), order


def test_environment_left_as_found():
    out = subprocess.run([sys.executable, "-c", PROBE, str(H.python_dir())], env=_env(),
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["None", "None"]


def test_users_choice_kept():
    for extra in ({"GOMP_SPINCOUNT": "12345"}, {"OMP_WAIT_POLICY": "active"}):
        out = subprocess.run([sys.executable, "-c", PROBE, str(H.python_dir())], env=_env(**extra),
                             capture_output=True, text=True, timeout=60, check=True)
        want = "b'12345'" if "GOMP_SPINCOUNT" in extra else "None"
        assert out.stdout.split() == [want, "None"], extra
