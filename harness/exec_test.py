"""Tests of "uibt exec" itself (harness/exec.py), run by make test.

Each test runs ./uibt exec as a user would, on the programs that
scripts/exec-tests.sh builds from tests/exec, and checks its exit status,
standard output and standard error: the report, the pass-through and the
errors.  The bad-input tests boot nothing.
"""

import os
import re
import shutil
import subprocess
import tempfile

import ktap

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(TOP, "build", "exec-tests")
UIBT = os.path.join(TOP, "uibt")


def uibt_exec_raw(args, stdin=b"", cwd=None):
    # uibt exec's own --timeout first: it stops QEMU; ours is the backstop.
    r = subprocess.run([UIBT, "exec", "--timeout", "240"] + args, input=stdin,
                       capture_output=True, cwd=cwd, timeout=300)
    return r.returncode, r.stdout, r.stderr


def uibt_exec(args, stdin=b"", cwd=None):
    rc, out, err = uibt_exec_raw(args, stdin, cwd)
    return rc, out.decode(errors="replace"), err.decode(errors="replace")


def findings(err):
    return re.findall(r"^uibt exec: missing ENDBR: (.*)$", err, re.M)


class Check:
    """Collects what a test found wrong."""

    def __init__(self, rc, out, err):
        self.rc, self.out, self.err, self.wrong = rc, out, err, []

    def status(self, want):
        if self.rc != want:
            self.wrong.append(f"exit status {self.rc}, expected {want}")

    def has(self, stream, pattern):
        text = self.out if stream == "stdout" else self.err
        if not re.search(pattern, text, re.M):
            self.wrong.append(f"no /{pattern}/ in {stream}")

    def finds(self, patterns):
        got = findings(self.err)
        if len(got) != len(patterns):
            self.wrong.append(f"{len(got)} findings, expected {len(patterns)}")
        for p in patterns:
            if not any(re.match(p, g) for g in got):
                self.wrong.append(f"no finding /{p}/")

    def reason(self):
        if not self.wrong:
            return ""
        tail = " | ".join(self.err.strip().splitlines()[-4:])
        return "; ".join(self.wrong) + f" (stderr: {tail})"


def t_report_lists_each_target():
    c = Check(*uibt_exec(["--report", "--", f"{BIN}/missing"]))
    c.status(24)
    c.has("stdout", r"^sum 48$")
    prog = re.escape(f"{BIN}/missing")
    # Symbolized in the guest; the source line added here from the debug
    # information (the assembly's too), but not for JIT code.
    c.finds([prog + r":asm_nolanding\+0x0 \(0x[0-9a-f]+\), 2 times  at .*/tests/exec/missing_asm\.S:\d+$",
             prog + r":nocf_function\+0x0 \(0x[0-9a-f]+\), 2 times  at .*/tests/exec/missing\.c:\d+$",
             r"\[anon\]\+0x0 \(0x[0-9a-f]+\), 2 times$",
             re.escape(f"{BIN}/libmissing.so") + r":lib_nolanding\+0x0 \(0x[0-9a-f]+\), 2 times  "
             r"at .*/tests/exec/libmissing\.S:\d+$"])
    c.has("stderr", r"^uibt exec: 4 missing ENDBR targets, 8 faults; the command exited with 24$")
    return c


def t_one_finding_per_target_in_every_process():
    """Two processes, two address-space layouts: a file's target is one
    finding; JIT code, which is no file, is one per address."""
    prog = f"{BIN}/missing"
    c = Check(*uibt_exec(["--report", "--", "sh", "-c", f"{prog} >/dev/null; {prog}"]))
    c.status(24)
    p = re.escape(prog)
    c.finds([p + r":asm_nolanding\+0x0 \(0x[0-9a-f]+\), 4 times  at ",
             p + r":nocf_function\+0x0 \(0x[0-9a-f]+\), 4 times  at ",
             r"\[anon\]\+0x0 \(0x[0-9a-f]+\), 2 times$",
             r"\[anon\]\+0x0 \(0x[0-9a-f]+\), 2 times$",
             re.escape(f"{BIN}/libmissing.so") + r":lib_nolanding\+0x0 \(0x[0-9a-f]+\), 4 times  at "])
    c.has("stderr", r"^uibt exec: 5 missing ENDBR targets, 16 faults; the command exited with 24$")
    return c


def t_default_dies_at_the_first():
    c = Check(*uibt_exec(["--", f"{BIN}/missing"]))
    c.status(128 + 11)
    c.finds([re.escape(f"{BIN}/missing") + r":asm_nolanding\+0x0 \(0x[0-9a-f]+\), 1 time  "
             r"at .*/tests/exec/missing_asm\.S:\d+$"])
    return c


def t_stdio_cwd_and_status_pass_through():
    work = tempfile.mkdtemp(prefix="cwd-", dir=BIN)
    try:
        c = Check(*uibt_exec(["-v", "--", f"{BIN}/missing", "io"],
                             stdin=b"line one\nline two\n", cwd=work))
        c.status(3)
        if c.out != "line one\nline two\n":
            c.wrong.append(f"stdout {c.out!r}")
        c.has("stderr", r"^missing: to standard error$")
        written = os.path.join(work, "uibt-exec-out")
        if not os.path.exists(written) or open(written).read() != "written in the guest\n":
            c.wrong.append("the working directory did not get the program's file")
        c.finds([])
        c.has("stderr", r"^uibt exec: 0 missing ENDBR targets, 0 faults; the command exited with 3$")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return c


def t_unmarked_runs_without_ibt():
    c = Check(*uibt_exec(["--report", "--", f"{BIN}/missing-unmarked"]))
    c.status(24)
    c.finds([])
    c.has("stderr", r"^uibt exec: 0 missing ENDBR targets, 0 faults; the command exited with 24$")
    return c


def t_policy_on_forces_ibt():
    c = Check(*uibt_exec(["--policy", "on", "--report", "--", f"{BIN}/missing-unmarked"]))
    c.status(24)
    got = findings(c.err)
    if not any(re.match(re.escape(f"{BIN}/missing-unmarked") + r":main\+0x0 ", g) for g in got):
        c.wrong.append("main (no ENDBR, called by libc) is not among the findings")
    return c


def t_script_runs():
    c = Check(*uibt_exec(["--", f"{BIN}/hello.sh"]))
    c.status(5)
    c.has("stdout", r"^hello from .*/hello\.sh$")
    return c


def t_arguments_and_status_as_given():
    """Quotes, $, spaces, a newline and a glob reach the program unchanged."""
    args = ["a b", "it's", "$HOME", "x\ny", "*", "\\", ""]
    c = Check(*uibt_exec(["--", "sh", "-c", 'printf "[%s]" "$@"; exit 200', "sh"] + args))
    c.status(200)
    want = "".join(f"[{a}]" for a in args)
    if c.out != want:
        c.wrong.append(f"stdout {c.out!r}, expected {want!r}")
    return c


def t_reopened_stderr_keeps_order():
    """A program that opens /dev/stderr again appends, as with a pipe."""
    c = Check(*uibt_exec(["--", "sh", "-c", "echo one >&2; echo two >/dev/stderr; "
                          "echo three >&2; echo four >/dev/stdout; echo five"]))
    c.status(0)
    if c.err != "one\ntwo\nthree\n":
        c.wrong.append(f"stderr {c.err!r}")
    if c.out != "four\nfive\n":
        c.wrong.append(f"stdout {c.out!r}")
    return c


def t_binary_data_passes_through():
    data = bytes(range(256)) * 64
    rc, out, err = uibt_exec_raw(["--", "cat"], stdin=data)
    c = Check(rc, "", err.decode(errors="replace"))
    c.status(0)
    if out != data:
        c.wrong.append(f"stdout: {len(out)} bytes, not the {len(data)} given")
    return c


def t_working_directory_in_tmp():
    work = tempfile.mkdtemp(prefix="uibt-exec-")
    try:
        c = Check(*uibt_exec(["--", "sh", "-c", "pwd; echo made >file"], cwd=work))
        c.status(0)
        if c.out != work + "\n":
            c.wrong.append(f"stdout {c.out!r}, expected {work!r}")
        if not os.path.exists(os.path.join(work, "file")):
            c.wrong.append("the file written in the guest is not here")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return c


def t_timeout_stops_the_guest():
    r = subprocess.run([UIBT, "exec", "--timeout", "20", "--", "sleep", "600"],
                       capture_output=True, timeout=120)
    c = Check(r.returncode, r.stdout.decode(errors="replace"),
              r.stderr.decode(errors="replace"))
    c.status(125)
    c.has("stderr", r"^uibt exec: timed out after 20")
    return c


def bad_input(args, status, pattern):
    def test():
        c = Check(*uibt_exec(args))
        c.status(status)
        c.has("stderr", pattern)
        return c
    return test


TESTS = [
    ("report lists each target", t_report_lists_each_target),
    ("one finding per target in every process", t_one_finding_per_target_in_every_process),
    ("default dies at the first", t_default_dies_at_the_first),
    ("stdio, cwd and status pass through", t_stdio_cwd_and_status_pass_through),
    ("unmarked program runs without IBT", t_unmarked_runs_without_ibt),
    ("policy on forces IBT", t_policy_on_forces_ibt),
    ("a #! script runs", t_script_runs),
    ("arguments and exit status as given", t_arguments_and_status_as_given),
    ("reopened /dev/stderr keeps the order", t_reopened_stderr_keeps_order),
    ("binary data passes through", t_binary_data_passes_through),
    ("working directory in /tmp", t_working_directory_in_tmp),
    ("--timeout stops the guest", t_timeout_stops_the_guest),
    ("no such program: 127", bad_input(["--", "/nonexistent/prog"], 127,
                                      r"^uibt exec: /nonexistent/prog: no such file$")),
    ("not an ELF file: 126", bad_input(["--", f"{BIN}/notelf"], 126,
                                      r"notelf: not an ELF file")),
    ("other architecture: 126", bad_input(["--", f"{BIN}/aarch64"], 126,
                                         r"aarch64: a program for AArch64")),
    ("missing library: 127", bad_input(["--", f"{BIN}/gone"], 127,
                                      r"gone: needs libgone\.so, which the dynamic linker")),
    ("no program: usage error", bad_input([], 2, r"no program given")),
    ("program in /proc: 126", bad_input(["--", "/proc/self/exe"], 126,
                                        r"/proc/self/exe: in /proc, which the guest")),
]


def run_all(say):
    res = []
    for name, test in TESTS:
        try:
            c = test()
            why = c.reason()
        except (subprocess.TimeoutExpired, OSError) as e:
            why = f"{type(e).__name__}: {e}"
        res.append(ktap.Result("exec", name, "fail" if why else "pass", why))
        say(f"  [exec] {'ok' if not why else 'FAILED'}: {name}")
    return res
