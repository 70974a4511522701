"""The cases CMake registers (argv) are run_case.py's CASES, no more, no fewer.
Reads run_case.py's text (no torch needed)."""
import ast
import os
import sys

source = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_case.py")).read()
defined = None
for node in ast.walk(ast.parse(source)):
    if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CASES" for t in node.targets):
        defined = sorted(k.value for k in node.value.keys)
registered = sorted(sys.argv[1:])
if defined != registered:
    sys.exit("tests/peers: run_case.py defines %s, CMakeLists.txt registers %s" % (defined, registered))
print("%d cases registered" % len(defined))
# SPDX-License-Identifier: GPL-3.0-or-later
