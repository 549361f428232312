# The tests import the package from the build tree: PYTHONPATH=<build>/python (scripts/test_all.sh
# sets it); without it, <repo>/build/python is used.
import os
import sys

try:
    import lowbit  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "build", "python"))
