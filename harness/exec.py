"""uibt exec: run one program of this machine under IBT, on qemu-ibt.

    ./uibt exec [--policy property|on] [--report] [-v] -- PROGRAM [ARGS...]

The test kernel boots on our QEMU with the CET-IBT CPU, and the program runs
there, chrooted into this machine's / (shared read-only over virtio-9p), with
the working directory and /tmp shared read-write: its paths, libraries and
data files are the ones it has here.  glibc 2.36's libraries are replaced by
the same glibc built with --enable-cet (build/glibc-2.36), which manages IBT
as glibc 2.28-2.38 do.  Standard input (read to its end first, or nothing
from a terminal), standard output and standard error pass through; the exit
status is the program's, 128 + N when signal N killed it.

Why 9p: the program, every library it loads (dlopen too) and whatever files
a test suite reads come without a list and without packing an image per run,
and the program's writes land in the working directory as it makes them.

The program runs under cettrace (tools/cet): a missing ENDBR is reported as
OBJECT:FUNCTION+0xOFF (ADDRESS), named in the guest from the process's memory
map and the object's symbol table; here, on the host, addr2line adds the
source line where the object has debug information.  Without --report the
SIGSEGV is delivered as without the tracer (the program dies, or its handler
runs); with --report the tracker is cleared and the program resumes at the
target, so that one run lists every missing ENDBR.
"""

import argparse
import ctypes
import functools
import io
import os
import re
import shlex
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
KERNEL = os.path.join(os.environ.get("UIBT_KOUT", os.path.join(BUILD, "kbuild")),
                      "arch", "x86", "boot", "bzImage")
INITRD = os.path.join(os.environ.get("UIBT_GUEST", os.path.join(BUILD, "guest")),
                      "exec.cpio.gz")
QEMU = os.path.join(BUILD, "qemu-build", "qemu-system-x86_64")
GLIBC = os.path.join(BUILD, "glibc-2.36", "root")
RUNS = os.path.join(BUILD, "exec")
CPU = "max,+cet-ibt,vendor=GenuineIntel"
# pci=noacpi: PCI interrupts from the BIOS's table, not from evaluating
# ACPI's four interrupt links, which takes a second of emulated time.
CMDLINE = "console=ttyS0 panic=-1 ibt=warn no5lvl quiet pci=noacpi"
# Where this machine's glibc 2.36 lives (Debian 12, merged /usr).
HOST_LIBDIR = "/lib/x86_64-linux-gnu"

EXIT_USAGE = 2
EXIT_GUEST = 125       # uibt exec itself failed (as docker run and env use it)
EXIT_CANNOT_RUN = 126
EXIT_NOT_FOUND = 127

MACHINES = {3: "i386", 62: "x86-64", 40: "ARM", 183: "AArch64", 243: "RISC-V",
            8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "S/390", 2: "SPARC",
            43: "SPARC64", 258: "LoongArch"}

FINDING = re.compile(r"^cettrace: missing ENDBR: (?P<where>.*) \((?P<addr>0x[0-9a-f]+)\), "
                     r"(?P<count>\d+) times?$")
SUMMARY = re.compile(r"^cettrace: (\d+) missing ENDBR targets?, (\d+) faults?; ")


class Fail(Exception):
    """An error of uibt exec's, with the exit status it ends with."""

    def __init__(self, msg, status):
        super().__init__(msg)
        self.status = status


def note(msg):
    print(f"uibt exec: {msg}", file=sys.stderr, flush=True)


# --- the program -------------------------------------------------------------

def resolve(prog):
    """The program's absolute path, as execvp() would find it."""
    if "/" in prog:
        if not os.path.exists(prog):
            raise Fail(f"{prog}: no such file", EXIT_NOT_FOUND)
        return os.path.abspath(prog)
    found = shutil.which(prog)
    if not found:
        raise Fail(f"{prog}: not found in PATH", EXIT_NOT_FOUND)
    return os.path.abspath(found)


def check_program(path, shown):
    """Refuse what the guest could not run, with the reason."""
    if os.path.isdir(path):
        raise Fail(f"{shown}: is a directory", EXIT_CANNOT_RUN)
    if not os.access(path, os.X_OK):
        raise Fail(f"{shown}: not executable", EXIT_CANNOT_RUN)
    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"#!"):
        return "script"
    if not head.startswith(b"\x7fELF") or len(head) < 20:
        raise Fail(f"{shown}: not an ELF file (nor a #! script)", EXIT_CANNOT_RUN)
    endian = "<" if head[5] == 1 else ">"
    machine = struct.unpack_from(endian + "H", head, 18)[0]
    if machine not in (3, 62):
        arch = MACHINES.get(machine, f"machine {machine}")
        raise Fail(f"{shown}: a program for {arch}; the guest runs x86-64 and i386 programs",
                   EXIT_CANNOT_RUN)
    return "elf"


def missing_libraries(path):
    """The shared libraries the dynamic linker cannot find for path."""
    r = subprocess.run(["ldd", path], capture_output=True, text=True)
    return re.findall(r"^\s*(\S+) => not found", r.stdout, re.M)


# --- the guest's view --------------------------------------------------------

@functools.lru_cache(maxsize=None)
def glibc_binds():
    """(CET library, the host's library it stands in for), by real paths.

    Every library of build/glibc-2.36 whose name this machine's glibc also
    has: the two must be one version (Debian 12's 2.36), as ld.so and libc
    share private interfaces.
    """
    lib64 = os.path.join(GLIBC, "lib64")
    binds = []
    for name in sorted(os.listdir(lib64)):
        if ".so" not in name:
            continue
        src = os.path.realpath(os.path.join(lib64, name))
        dst = os.path.realpath(os.path.join(HOST_LIBDIR, name))
        # The same file name on both sides: libcrypt.so.1 is glibc's here
        # and libxcrypt's (libcrypt.so.1.1.0) on Debian 12, another library.
        if (os.path.isfile(src) and os.path.isfile(dst) and (src, dst) not in binds and
                os.path.basename(src) == os.path.basename(dst)):
            binds.append((src, dst))
    return tuple(binds)


def write_job(ctl, argv, cwd, shared_cwd, policy, report, stdin_file):
    # Arguments and environment as bytes: what is not UTF-8 passes unchanged.
    def text(path):
        return open(os.path.join(ctl, path), "w", encoding="utf-8", errors="surrogateescape")

    with text("job") as f:
        f.write(f"UIBT_CWD={shlex.quote(cwd)}\n")
        f.write(f"UIBT_CWD_SHARED={'1' if shared_cwd else ''}\n")
    with text("binds") as f:
        for src, dst in glibc_binds():
            f.write(f"{src}\t{dst}\n")
    trace = ["/run/uibt/cettrace", "-o", "/run/uibt/ctl/report"]
    environ = dict(os.environ)
    if policy == "on":
        trace.append("--on")
        # glibc 2.28-2.38 turn IBT off for a program with an unmarked object
        # (ARCH_CET_DISABLE, which CET_EXEC_ALWAYS_ON allows): tell the CET
        # glibc to keep it on.
        tunables = [t for t in environ.get("GLIBC_TUNABLES", "").split(":") if t]
        environ["GLIBC_TUNABLES"] = ":".join(tunables + ["glibc.cpu.x86_ibt=on"])
    if not report:
        trace.append("--deliver")
    env = [f"{k}={v}" for k, v in environ.items()]
    q = shlex.quote
    # Standard output and error are pipes, as a caller's usually are, copied
    # to files that the host reads as they grow: a program that reopens
    # /dev/stderr appends to the pipe instead of rewriting the file.
    with text("run.sh") as f:
        f.write(f"""# uibt exec: the program, run by the guest's init in the host's /
bb=/run/uibt/busybox ctl=/run/uibt/ctl
die() {{ echo "uibt exec (guest): $*" >$ctl/failed; exit 1; }}
cd {q(cwd)} || die "cannot enter the working directory"
$bb mkfifo /run/uibt/out /run/uibt/err || die "cannot make the output pipes"
$bb cat /run/uibt/out >$ctl/stdout &
$bb cat /run/uibt/err >$ctl/stderr &
$bb env -i {" ".join(q(e) for e in env)} \\
\t{" ".join(q(a) for a in trace)} -- {" ".join(q(a) for a in argv)} \\
\t<{q(stdin_file)} >/run/uibt/out 2>/run/uibt/err
status=$?
wait
exit $status
""")


def qemu_command(ctl, cwd, shared_cwd, memory):
    def share(path, tag, ro=False):
        # QEMU's option syntax: a comma in a value is written twice.
        path = path.replace(",", ",,")
        opts = f"local,path={path},mount_tag={tag},security_model=none,multidevs=remap"
        return ["-virtfs", opts + (",readonly=on" if ro else "")]

    cmd = [QEMU, "-nodefaults", "-accel", "tcg", "-cpu", CPU, "-smp", "2",
           "-m", str(memory), "-no-reboot", "-L", "/usr/share/seabios",
           "-L", "/usr/share/qemu", "-nic", "none", "-display", "none",
           "-monitor", "none", "-serial",
           "file:" + os.path.join(ctl, "console.log").replace(",", ",,"),
           "-kernel", KERNEL, "-initrd", INITRD, "-append", CMDLINE]
    cmd += share(ctl, "uibt") + share("/", "hostroot", ro=True) + share("/tmp", "tmp")
    if shared_cwd:
        cmd += share(cwd, "cwd")
    return cmd


# --- running -----------------------------------------------------------------

class Tail:
    """Copy what the guest appends to a file to one of our streams."""

    def __init__(self, path, stream):
        self.path, self.stream, self.pos = path, stream, 0

    def pump(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        if data:
            self.pos += len(data)
            self.stream.write(data)
            self.stream.flush()


@functools.lru_cache(maxsize=None)
def functions(obj, dynamic):
    """{function: value} of obj's symbol table (dynamic: .dynsym), the first
    of each name; read once per object, however many findings it has."""
    flags = ["-D", "--defined-only"] if dynamic else ["--defined-only"]
    r = subprocess.run(["nm"] + flags + [obj], capture_output=True, text=True)
    table = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        # nm -D prints versioned names: name@@VERSION
        if len(parts) == 3 and parts[1] in "tTwW":
            table.setdefault(parts[2].split("@")[0], int(parts[0], 16))
    return table


def symbolize(where):
    """Source line of OBJECT:FUNCTION+0xOFF, by addr2line; or ''."""
    m = re.match(r"^(/[^:]+):([^+]+)\+(0x[0-9a-f]+)$", where)
    if not m or not shutil.which("addr2line"):
        return ""
    obj, func, off = m.group(1), m.group(2), int(m.group(3), 16)
    for src, dst in glibc_binds():
        if dst == os.path.realpath(obj):
            obj = src  # the guest's, not this machine's
    value = functions(obj, False).get(func)
    if value is None:
        value = functions(obj, True).get(func)
    if value is None:
        return ""
    r = subprocess.run(["addr2line", "-e", obj, hex(value + off)],
                       capture_output=True, text=True)
    line = r.stdout.strip().splitlines()[0] if r.stdout.strip() else ""
    if not line or line.startswith("??"):
        return ""
    return f"  at {line.split(' (')[0]}"


def show_report(path, report, verbose):
    """Print cettrace's findings, with source lines; their number."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise Fail("the guest's tracer wrote no report (its error, if any, is above)",
                   EXIT_GUEST) from None
    findings, summary = 0, False
    for line in lines:
        m = FINDING.match(line)
        if m:
            findings += 1
            note(f"missing ENDBR: {m.group('where')} ({m.group('addr')}), "
                 f"{m.group('count')} time{'s' if m.group('count') != '1' else ''}"
                 f"{symbolize(m.group('where'))}")
        elif SUMMARY.match(line):
            summary = True
            if report or verbose:
                note(line[len("cettrace: "):])
        elif line.startswith("cettrace: "):
            note(line[len("cettrace: "):])
    if not summary:
        raise Fail("the guest's tracer ended without its summary", EXIT_GUEST)
    return findings


def parts(ctl, total):
    """Where the time of a run went, from the guest's uptime stamps."""
    times = {}
    try:
        with open(os.path.join(ctl, "times")) as f:
            for line in f:
                k, v = line.split()
                times[k] = float(v)
    except (FileNotFoundError, ValueError):
        return None
    if not {"booted", "mounted", "ended"} <= set(times):
        return None
    return {"boot": times["booted"], "shares": times["mounted"] - times["booted"],
            "program": times["ended"] - times["mounted"],
            "qemu": total - times["ended"], "total": total}


def need(path, what):
    if not os.path.exists(path):
        raise Fail(f"{what} is missing ({os.path.relpath(path, TOP)}): run 'make build' "
                   "first (about 50 minutes the first time)", EXIT_GUEST)


def run(args):
    argv = args.command
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise Fail("no program given; usage: ./uibt exec [--policy property|on] "
                   "[--report] [-v] -- PROGRAM [ARGS...]", EXIT_USAGE)
    path = resolve(argv[0])
    kind = check_program(path, argv[0])
    cwd = os.getcwd()
    for where, shown, status in ((path, argv[0], EXIT_CANNOT_RUN),
                                 (cwd, "the working directory", EXIT_GUEST)):
        if guest_own(where):
            raise Fail(f"{shown}: in {guest_own(where)}, which the guest has its own of",
                       status)
    if kind == "elf":
        gone = missing_libraries(path)
        if gone:
            raise Fail(f"{argv[0]}: needs {', '.join(gone)}, which the dynamic linker "
                       "cannot find (LD_LIBRARY_PATH passes through)", EXIT_NOT_FOUND)
    for p, what in ((KERNEL, "the test kernel"), (INITRD, "the uibt exec initramfs"),
                    (QEMU, "qemu-ibt"), (os.path.join(GLIBC, "lib64"), "glibc 2.36 with CET")):
        need(p, what)

    shared_cwd = cwd not in ("/", "/tmp") and not cwd.startswith("/tmp/")
    os.makedirs(RUNS, exist_ok=True)
    ctl = tempfile.mkdtemp(prefix="run-", dir=RUNS)
    try:
        return boot_and_run(args, argv, cwd, shared_cwd, ctl)
    except BaseException:
        # Keep the console for the message, not a copy of standard input.
        if os.path.exists(os.path.join(ctl, "stdin")):
            os.unlink(os.path.join(ctl, "stdin"))
        raise


def guest_own(path):
    """The folder of path's that the guest mounts its own of, or ''."""
    for d in ("/proc", "/sys", "/dev", "/run"):
        if path == d or path.startswith(d + "/"):
            return d
    return ""


def kill_with_parent():
    """In QEMU's child: die with uibt exec, however it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def boot_and_run(args, argv, cwd, shared_cwd, ctl):
    stdin_file = "/dev/null"
    # Standard input is read to its end first (not from a terminal, nor a
    # closed one): the guest reads it from a file.
    if sys.stdin is not None and not sys.stdin.isatty():
        with open(os.path.join(ctl, "stdin"), "wb") as f:
            shutil.copyfileobj(sys.stdin.buffer, f)
        stdin_file = "/run/uibt/ctl/stdin"
    # argv as given: the guest has the same PATH, working directory and files.
    write_job(ctl, argv, cwd, shared_cwd, args.policy, args.report, stdin_file)
    cmd = qemu_command(ctl, cwd, shared_cwd, args.memory)
    with open(os.path.join(ctl, "command"), "w") as f:
        f.write(" ".join(shlex.quote(c) for c in cmd) + "\n")

    start = time.time()
    emu_log = open(os.path.join(ctl, "emulator.log"), "w")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=emu_log,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=kill_with_parent)
    out = getattr(args, "stdout", None) or sys.stdout.buffer
    tails = [Tail(os.path.join(ctl, "stdout"), out),
             Tail(os.path.join(ctl, "stderr"), sys.stderr.buffer)]
    timed_out = False
    try:
        while proc.poll() is None:
            for t in tails:
                t.pump()
            if args.timeout and time.time() - start > args.timeout:
                timed_out = True
                break
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        emu_log.close()
    for t in tails:
        t.pump()
    total = time.time() - start

    console = os.path.relpath(os.path.join(ctl, "console.log"), os.getcwd())
    if timed_out:
        raise Fail(f"timed out after {args.timeout} s; the guest's console: {console}",
                   EXIT_GUEST)
    failed = os.path.join(ctl, "failed")
    if os.path.exists(failed):
        with open(failed) as f:
            raise Fail(f"{f.read().strip()}; the guest's console: {console}", EXIT_GUEST)
    try:
        with open(os.path.join(ctl, "status")) as f:
            status = int(f.read().strip())
    except (FileNotFoundError, ValueError):
        raise Fail(f"the guest ended without the program's exit status; its console: "
                   f"{console}", EXIT_GUEST) from None
    show_report(os.path.join(ctl, "report"), args.report, args.verbose)
    args.times = parts(ctl, total)
    if args.verbose and args.times:
        note("kernel boot {boot:.2f} s, shares {shares:.2f} s, program {program:.2f} s, "
             "QEMU and firmware {qemu:.2f} s; total {total:.2f} s".format(**args.times))
    if args.keep:
        note(f"the run's files (console, command): {os.path.relpath(ctl, os.getcwd())}")
    else:
        shutil.rmtree(ctl, ignore_errors=True)
    return status


def cc_flags():
    """gcc's flags for a program of the CET glibc: its start files are marked."""
    return [f"--sysroot={GLIBC}", f"-B{GLIBC}/usr/lib64/", f"-L{GLIBC}/usr/lib64",
            "-fcf-protection=branch"]


def cmd_cc(args):
    """./uibt cc ARGS: gcc with cc_flags(), for programs to run with uibt exec."""
    args = args[1:] if args[:1] == ["--"] else args
    if not os.path.exists(os.path.join(GLIBC, "usr", "lib64", "crt1.o")):
        note("glibc 2.36 with CET is not built: run 'make glibc' first")
        return EXIT_GUEST
    os.execvp("gcc", ["gcc"] + cc_flags() + args)


def terminated(signum, frame):
    raise Fail(f"stopped by signal {signum}", 128 + signum)


def cmd_exec(args):
    # SIGTERM, like ^C, stops the guest on its way out.
    signal.signal(signal.SIGTERM, terminated)
    try:
        return run(args)
    except Fail as e:
        note(str(e))
        return e.status
    except KeyboardInterrupt:
        note("interrupted")
        return 128 + signal.SIGINT


def cmd_bench(rounds=5):
    """make bench-exec: ./uibt exec of a static hello-world, by part."""
    hello = os.path.join(BUILD, "exec-tests", "hello-static")
    need(hello, "the static hello-world")
    runs = []
    for i in range(rounds):
        args = argparse.Namespace(command=["--", hello], policy="property", report=False,
                                  verbose=False, keep=False, timeout=120, memory=1024,
                                  stdout=io.BytesIO())
        try:
            status = run(args)
        except Fail as e:
            note(f"bench: {e}")
            return e.status
        if status != 0 or args.stdout.getvalue() != b"hello\n" or not args.times:
            note(f"bench: round {i + 1}: exit status {status}, output "
                 f"{args.stdout.getvalue()!r}, times {args.times}")
            return 1
        runs.append(args.times)
        print("bench-exec: round {}: total {total:.2f} s (kernel boot {boot:.2f}, shares "
              "{shares:.2f}, program {program:.2f}, QEMU and firmware {qemu:.2f})"
              .format(i + 1, **args.times), flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print("bench-exec: median of {} rounds: {total:.2f} s end to end: kernel boot "
          "{boot:.2f} s, shares {shares:.2f} s, program {program:.2f} s, QEMU and "
          "firmware {qemu:.2f} s (goal: under 3 s)".format(rounds, **med))
    return 0


def add_parser(sub):
    e = sub.add_parser("exec", help="run a program of this machine under IBT (qemu-ibt)",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--policy", choices=["property", "on"], default="property",
                   help="property: IBT as the program's and its libraries' ELF notes and "
                   "its C library decide (the default); on: IBT forced on "
                   "(CET_EXEC_ALWAYS_ON), whatever they say")
    e.add_argument("--report", action="store_true",
                   help="list every missing ENDBR in one run: resume the program at "
                   "each target instead of letting it die at the first")
    e.add_argument("-v", "--verbose", action="store_true",
                   help="print the summary and the time of each part")
    e.add_argument("--keep", action="store_true",
                   help="keep the run's folder (console, command) under build/exec")
    e.add_argument("--timeout", type=float, default=0,
                   help="stop the guest after this many seconds (default: none)")
    e.add_argument("-m", "--memory", type=int, default=1024, help="guest memory in MiB")
    e.add_argument("command", nargs=argparse.REMAINDER,
                   help="-- PROGRAM [ARGS...]")
    c = sub.add_parser("cc", help="gcc for uibt exec: the CET glibc's marked start "
                       "files and -fcf-protection=branch")
    c.add_argument("gcc_args", nargs=argparse.REMAINDER, help="gcc's arguments")
    return e
