"""Judge libffi's suite as DejaGnu would, from what scripts/acceptance.sh ran.

    python3 harness/dg_output.py TESTSUITE RUN

TESTSUITE is libffi's testsuite folder; RUN holds "results" (NAME STATUS per
program) and out/NAME (its output).  A program passes when it exits 0 and
its output matches the test's dg-output lines, joined, as a Tcl regular
expression (DejaGnu's dg-output; "." matches a newline there too).  The two
bhaible programs print each case twice, directly and through libffi: they
pass when no line is unpaired (their own Makefile's "uniq -u" check).
"""

import os
import re
import sys

DG_OUTPUT = re.compile(r'dg-output\s+"((?:[^"\\]|\\.)*)"')


def tcl_unquote(s):
    """A Tcl double-quoted word's value: backslash sequences substituted."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else
                  "\t" if m.group(1) == "t" else m.group(1), s)


def expected(source):
    with open(source, errors="replace") as f:
        return "".join(tcl_unquote(m.group(1)) for m in DG_OUTPUT.finditer(f.read()))


def unpaired(output):
    lines = output.splitlines()
    runs = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1][1] += 1
        else:
            runs.append([line, 1])
    return [line for line, n in runs if n == 1]


def judge(testsuite, name, status, output):
    """'' when the test passed, else why not."""
    if status != 0:
        return f"exit status {status}"
    group, test = name.split(".", 1)
    if group == "bhaible":
        bad = unpaired(output)
        return f"{len(bad)} unpaired lines, first: {bad[0]!r}" if bad else ""
    test = re.sub(r"-O[0-9s]$", "", test)
    pattern = expected(os.path.join(testsuite, f"libffi.{group}", test + ".c"))
    if pattern and not re.search(pattern, output.replace("\r", ""), re.S):
        return "output does not match its dg-output lines"
    return ""


def main():
    testsuite, run = sys.argv[1:3]
    passed = failed = 0
    with open(os.path.join(run, "results")) as f:
        for line in f:
            name, status = line.split()
            with open(os.path.join(run, "out", name), errors="replace") as o:
                output = o.read()
            why = judge(testsuite, name, int(status), output)
            if why:
                failed += 1
                print(f"FAIL {name}: {why}")
            else:
                passed += 1
    print(f"libffi: {passed} of {passed + failed} programs passed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
