"""Where the lab finds the repository, the flowtrack binary and NPF."""
import os
import sys
from pathlib import Path

from labkit import LabError

LAB_DIR = Path(__file__).resolve().parent.parent
ROOT = LAB_DIR.parent


def _from_env(var, default):
    path = Path(os.environ.get(var) or default)
    return path if path.is_absolute() else ROOT / path


def flowtrack_bin():
    """$FLOWTRACK_BIN, default build/flowtrack; a relative path is taken from the repository root."""
    path = _from_env("FLOWTRACK_BIN", "build/flowtrack")
    if not os.access(path, os.X_OK):
        raise LabError(f"no flowtrack binary at {path}: run 'make build', or set FLOWTRACK_BIN")
    return path


def npf_command():
    """The start of an npf command line: this Python (the project's virtualenv) and lab/npf_main.py."""
    try:
        import npf  # noqa: F401  (only checks that it is there)
    except ImportError:
        raise LabError(f"NPF is not importable by {sys.executable}: run scripts/install-deps.sh "
                       "(or 'make deps'), then use .venv/bin/python") from None
    return [os.path.abspath(sys.executable), str(LAB_DIR / "npf_main.py")]
