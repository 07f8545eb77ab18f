#!/usr/bin/env python3
"""uibt harness: boot the test kernel on each platform and report results.

  uibt.py test [--platforms a,b] [--selftest]   boot, run the suite, summarise
  uibt.py run [--platform p]                    boot into the demo and a shell
  uibt.py exec [--report] -- PROGRAM [ARGS]     run a program of this machine
                                                under IBT (harness/exec.py)

The Makefile builds everything first (kernel, initramfs, ISO, emulators); this
script only boots and judges.  Platforms are data: harness/platforms.json.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exec as uibt_exec  # noqa: E402
import endbr  # noqa: E402
import exec_test  # noqa: E402
import ktap  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")
LOGS = os.environ.get("UIBT_LOGS", os.path.join(BUILD, "logs"))
# The Makefile passes these when it builds another tree (KOUT=, GUEST=).
KOUT = os.environ.get("UIBT_KOUT", os.path.join(BUILD, "kbuild"))
GUEST = os.environ.get("UIBT_GUEST", os.path.join(BUILD, "guest"))
KERNEL = os.path.join(KOUT, "arch", "x86", "boot", "bzImage")
INITRD = os.path.join(GUEST, "initramfs.cpio.gz")
# The test list as packed into the initramfs, so that results are judged
# against the list the guest ran, even if guest/tests changed since.
MANIFEST = os.path.join(GUEST, "root", "etc", "uibt", "tests")
# Another platform table, for instance one that points qemu-ibt at another
# QEMU build: UIBT_PLATFORMS=/abs/platforms.json.
PLATFORMS = os.environ.get("UIBT_PLATFORMS", os.path.join(TOP, "harness", "platforms.json"))
INSN_ELF = os.path.join(BUILD, "cet-insn", "cet-insn.elf")
INSN_ISO = os.path.join(BUILD, "cet-insn", "cet-insn.iso")

# What a boot runs: the Linux test kernel with its initramfs, or the
# instruction-level test image (tests/cet-insn), which programs the CET MSRs
# itself and prints one flat KTAP document.
SUITES = {
    "linux": {"done": "uibt: done", "flat": None},
    "cet-insn": {"done": "cet-insn: done", "flat": "cet-insn",
                 "manifest": [("cet-insn", "ibt", [], {})]},
}

CMDLINE = "console=ttyS0 panic=-1 ibt=warn no5lvl printk.devkmsg=on"

# After its done marker the guest still ends the processes left and reboots;
# a WARN from that teardown comes after the marker.  Keep reading until the
# guest restarts or powers off by itself, or this many seconds pass.
DONE_GRACE = 5.0
# The kernel's last words before it resets or powers off the machine: Bochs
# does not exit on a reset, it would boot again.
GUEST_OFF = re.compile(r"reboot: (Restarting system|Power down)|Kernel panic - not syncing")


def cmdline_for(mode):
    """The kernel command line of a boot; the Bochs ISOs are made with it."""
    extra = " uibt.shell=no" if mode == "demo-batch" else ""
    mode = "demo" if mode == "demo-batch" else mode
    return f"{CMDLINE} uibt.mode={mode}{extra}"

print_lock = threading.Lock()


def say(msg):
    with print_lock:
        print(msg, flush=True)


def die(msg):
    say(f"uibt: {msg}")
    sys.exit(2)


def load_platforms():
    """The platforms, by name; "like": NAME takes NAME's fields but those set."""
    with open(PLATFORMS) as f:
        plats = json.load(f)
    for name, plat in plats.items():
        like = plat.pop("like", None)
        if like:
            if "like" in plats[like]:
                die(f"{PLATFORMS}: {name} is like {like}, itself like another")
            plats[name] = plat = {**plats[like], **plat}
        plat["name"] = name
    return plats


def require(path, what):
    if not os.path.exists(path):
        die(f"{what} is missing ({os.path.relpath(path, TOP)}): run 'make test' "
            "(or 'make build') first")


# --- booting ---------------------------------------------------------------

def qemu_cmd(plat, suite, mode, console, extra_cmdline="", interactive=False):
    qemu = plat["qemu"]
    if "/" in qemu:
        qemu = os.path.join(TOP, qemu)
    cmd = [qemu, "-nodefaults", "-accel", "tcg", "-cpu", plat["cpu"],
           "-no-reboot", "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
           "-nic", "none"]
    if suite == "linux":
        # A platform's own kernel arguments ("nouseribt", "ibt=off").
        cmdline = " ".join(filter(None, (cmdline_for(mode), plat.get("cmdline"),
                                         extra_cmdline)))
        if plat.get("la57"):
            # The other platforms boot with 4-level paging, as most machines
            # run; this one keeps the CPU's 5-level paging.
            cmdline = cmdline.replace(" no5lvl", "")
        cmd += ["-smp", str(plat.get("smp", 1)),
                "-m", "512", "-kernel", KERNEL, "-initrd", INITRD,
                "-append", cmdline]
    else:
        # cet-insn.la57: the image turns 5-level paging on (test 69).
        cmdline = f"platform={plat['name']}" + (" cet-insn.la57" if plat.get("la57") else "")
        cmd += ["-m", "64", "-kernel", INSN_ELF, "-append", cmdline]
    # Extra arguments, such as make bench's -plugin.
    cmd += plat.get("qemu_args", [])
    if interactive:
        cmd += ["-nographic", "-serial", "mon:stdio"]
    else:
        cmd += ["-display", "none", "-monitor", "none",
                "-serial", f"file:{console}"]
    return cmd


def bochs_files(plat, workdir, iso, console):
    """Write a bochsrc and a debugger command file; return the command."""
    rc = os.path.join(workdir, "bochsrc")
    cmds = os.path.join(workdir, "bochs.cmds")
    # reset_on_triple_fault=0: a triple fault is a Bochs panic (fatal, below),
    # not a reset after which the guest boots again and may look fine.
    with open(rc, "w") as f:
        f.write(f"""megs: 256
cpu: model={plat['cpu_model']}, ips=100000000, reset_on_triple_fault=0
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
ata0-master: type=cdrom, path={iso}, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev={console}
clock: sync=none, time0=1
display_library: term
log: {os.path.join(workdir, 'bochs.log')}
panic: action=fatal
error: action=report
info: action=ignore
""")
    with open(cmds, "w") as f:
        f.write("c\nquit\n")
    # The compiled-in debugger wants a command file; the term display wants a
    # terminal, which script(1) provides.
    inner = f"bochs -q -f {rc} -rc {cmds}"
    return ["script", "-qfc", inner, "/dev/null"]


def boot(name, plat, suite, mode, workdir, extra_cmdline="", timeout=None,
         progress=True):
    """Boot one platform non-interactively; return the console text."""
    os.makedirs(workdir, exist_ok=True)
    console = os.path.join(workdir, "console.log")
    if os.path.exists(console):
        os.unlink(console)
    open(console, "w").close()
    if plat["kind"] == "qemu":
        cmd = qemu_cmd(plat, suite, mode, console, extra_cmdline)
    elif plat["kind"] == "bochs":
        if suite == "linux":
            iso = os.path.join(GUEST, f"uibt-{mode}.iso")
        else:
            iso = INSN_ISO
        require(iso, "the Bochs ISO")
        if extra_cmdline:
            die("extra kernel arguments are not supported on Bochs (the ISO fixes them)")
        cmd = bochs_files(plat, workdir, iso, console)
    else:
        die(f"platform {name}: unknown kind {plat['kind']}")
    done = re.compile(r"^" + re.escape(SUITES[suite]["done"]) + r"\s*$", re.M)
    timeout = timeout or plat.get("timeout", 600)
    emu_log = open(os.path.join(workdir, "emulator.log"), "w")
    with open(os.path.join(workdir, "command"), "w") as f:
        f.write(" ".join(cmd) + "\n")
    start = time.time()
    proc = subprocess.Popen(cmd, stdout=emu_log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=workdir,
                            start_new_session=True)
    last_report = start
    ended = "timeout"
    while time.time() - start < timeout:
        if proc.poll() is not None:
            ended = "exited"
            break
        with open(console, errors="replace") as f:
            text = f.read()
        m = done.search(text)
        if m:
            ended = "done"
            wait_guest_off(proc, console, m.end())
            break
        if "Kernel panic - not syncing" in text and plat["kind"] == "bochs":
            time.sleep(1)  # let the panic message reach the log
            ended = "panic"
            break
        if progress and time.time() - last_report > 30:
            last_report = time.time()
            n = len(re.findall(r"^(?:not )?ok \d+", text, re.M))
            say(f"  [{name}] {suite}: {int(time.time() - start)} s, {n} results so far")
        time.sleep(0.2)
    stop(proc)
    emu_log.close()
    elapsed = time.time() - start
    with open(console, errors="replace") as f:
        text = f.read()
    if ended == "timeout":
        text += f"\nuibt-harness: timeout after {timeout} s\n"
    return text, elapsed


def wait_guest_off(proc, console, since):
    """Read the console on for DONE_GRACE seconds after the done marker.

    Stop early when the emulator exits (QEMU, -no-reboot) or the kernel says
    it resets or powers off (Bochs would boot again).  Whatever it logged
    meanwhile stays in the console and is judged.
    """
    end = time.time() + DONE_GRACE
    while time.time() < end and proc.poll() is None:
        with open(console, errors="replace") as f:
            if GUEST_OFF.search(f.read(), since):
                return
        time.sleep(0.2)


def stop(proc):
    """End the emulator's process group, politely first."""
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


# --- judging ---------------------------------------------------------------

# test --only: the Linux suite's programs that a boot runs (all when empty).
ONLY = []


def judge(plat, suite, text):
    spec = SUITES[suite]
    manifest = spec.get("manifest") or ktap.load_manifest(MANIFEST)
    if suite == "linux" and ONLY:
        manifest = [m for m in manifest if m[0] in ONLY]
    con = ktap.parse(text, flat=spec["flat"], done=spec["done"])
    return ktap.results(con, manifest, set(plat.get("features", [])),
                        plat.get("boot_allowed_log", []),
                        plat.get("skip_allowed", []))


def count(results):
    c = {"pass": 0, "fail": 0, "skip": 0}
    for r in results:
        c[r.status] += 1
    return c


def write_results(workdir, results):
    path = os.path.join(workdir, "results.txt")
    with open(path, "w") as f:
        for r in results:
            f.write(r.line() + "\n")
    return path


def lost_ibt_selftest(plat, text):
    """The kernel's IBT selftest failed on a platform that provides IBT."""
    return "kernel_ibt" in plat.get("features", ()) and \
        re.search(r"^IBT selftest: Failed!", text, re.M) is not None


def expected_logs(text, patterns):
    """One result per pattern that the kernel log must show."""
    res = []
    for p in patterns:
        found = re.search(p, text, re.M)
        res.append(ktap.Result("boot", f"log shows /{p}/", "pass" if found else "fail",
                               "" if found else "not in the console"))
    return res


def run_platform(name, plat, out, expect_log=()):
    """Boot every suite on one platform; out[name] = (results, seconds).

    expect_log: regexes the Linux boot's console must match (make test-debug:
    the sanitizers and lockdep announce themselves, so "no report" means
    they were there to report).
    """
    res, total = [], 0.0
    for suite in plat.get("suites", ("cet-insn", "linux")):
        workdir = os.path.join(LOGS, name if suite == "linux" else f"{name}-{suite}")
        say(f"uibt: {name}: booting {suite} ({plat['description']}); console: "
            f"{os.path.relpath(os.path.join(workdir, 'console.log'), TOP)}")
        only = f"uibt.only={','.join(ONLY)}" if suite == "linux" and ONLY else ""
        text, elapsed = boot(name, plat, suite, "test", workdir, extra_cmdline=only)
        if suite == "linux" and lost_ibt_selftest(plat, text):
            # Under IDT, an interrupt taken between the selftest's indirect
            # JMP and its target clears the supervisor tracker (the CPU
            # does not restore it on IRET), so the kernel's boot-time IBT
            # selftest can lose that race and turn IBT off.  A broken
            # emulation fails twice; a lost race does not.
            say(f"uibt: {name}: the kernel's IBT selftest failed at boot; "
                "booting once more (an interrupt in the selftest's window)")
            text, more = boot(name, plat, suite, "test", workdir, extra_cmdline=only)
            elapsed += more
        r = judge(plat, suite, text)
        if suite == "linux":
            # The platform's own lines (Bochs: user IBT withdrawn, and why).
            r += expected_logs(text, list(expect_log) + plat.get("expect_log", []))
        path = write_results(workdir, r)
        c = count(r)
        say(f"uibt: {name}: {suite} finished in {elapsed:.0f} s: {c['pass']} passed, "
            f"{c['fail']} failed, {c['skip']} skipped "
            f"(details: {os.path.relpath(path, TOP)})")
        res += r
        total += elapsed
    out[name] = (res, total)


def harness_selftest(plats):
    """Check that the harness itself catches failures.

    Unit tests of the KTAP and log parser, then two real boots on stock QEMU
    with a deliberately failing test and with a guest that panics: the
    harness must judge both as failed.
    """
    res = []
    suite = unittest.defaultTestLoader.loadTestsFromName("test_ktap")
    ids = [t.id() for t in _iter_tests(suite)]  # a run empties the suite
    runner = unittest.TextTestRunner(stream=open(os.devnull, "w"))
    outcome = runner.run(suite)
    bad = {t.id(): "".join(tb.splitlines()[-1:]) for t, tb in
           outcome.failures + outcome.errors}
    for tid in ids:
        res.append(ktap.Result("harness", tid.split(".", 1)[1],
                               "fail" if tid in bad else "pass",
                               bad.get(tid, "")))

    plat = plats["qemu"]
    for inject, expect in (("fail", "injected failure"),
                           ("panic", "Kernel panic")):
        workdir = os.path.join(LOGS, f"harness-inject-{inject}")
        text, _ = boot("qemu", plat, "linux", "test", workdir,
                       extra_cmdline=f"uibt.inject={inject}", progress=False)
        judged = judge(plat, "linux", text)
        caught = [r for r in judged if r.status == "fail"]
        ok = bool(caught) and any(expect in (r.name + r.reason) for r in caught)
        res.append(ktap.Result(
            "harness", f"catches injected {inject}", "pass" if ok else "fail",
            "" if ok else f"harness did not report the injected {inject} "
            f"(see {os.path.relpath(workdir, TOP)})"))
    return res


def _iter_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _iter_tests(t)
        else:
            yield t


# Pairs of platforms whose results must agree test by test: our QEMU without
# +cet-ibt must behave like stock QEMU; on the instruction-level rules our
# QEMU must agree with Bochs, but for the deviations Bochs documents (its
# allowed skips).
COMPARE = [("qemu", "qemu-ibt-off", None), ("bochs", "qemu-ibt", "cet-insn")]


def compare(out):
    res = []
    for a, b, program in COMPARE:
        if a not in out or b not in out:
            continue
        skips = tuple(load_platforms()[a].get("skip_allowed", []))

        def table(name):
            return {(r.program, r.name): r for r in out[name][0]
                    if program is None or r.program == program}
        ta, tb = table(a), table(b)
        diffs = []
        for key in sorted(set(ta) | set(tb)):
            ra, rb = ta.get(key), tb.get(key)
            if ra and rb and ra.status == rb.status:
                continue
            if ra and ra.status == "skip" and skips and ra.reason.startswith(skips):
                continue
            diffs.append(f"{key[0]}: {key[1]}: {a} {ra.status if ra else 'absent'}, "
                         f"{b} {rb.status if rb else 'absent'}")
        what = program or "all tests"
        res.append(ktap.Result("compare", f"{b} agrees with {a} on {what}",
                               "fail" if diffs else "pass", "; ".join(diffs[:5])))
    return res


def kernel_checks():
    """Checks of the kernel binary itself: no stray kernel landing pad"""
    name = "vmlinux has ENDBR64 bytes only in ENDBR64 instructions"
    vmlinux = os.path.join(KOUT, "vmlinux")
    try:
        with open(os.path.join(KOUT, ".config")) as f:
            ibt = "CONFIG_X86_KERNEL_IBT=y\n" in f.read()
    except OSError:
        ibt = False
    if not ibt:
        return [ktap.Result("kernel", name, "skip", "no X86_KERNEL_IBT: no kernel landing pads")]
    found = endbr.stray(vmlinux)
    detail = "; ".join(f"{a:#x} in {fn}" for a, fn in found[:5])
    return [ktap.Result("kernel", name, "fail" if found else "pass", detail)]


def cmd_test(args):
    plats = load_platforms()
    # A platform with "default": false boots only when named (make test-debug's).
    names = args.platforms.split(",") if args.platforms else \
        [n for n, p in plats.items() if p.get("default", True)]
    for n in names:
        if n not in plats:
            die(f"unknown platform {n}; known: {', '.join(plats)}")
    require(KERNEL, "the kernel")
    require(INITRD, "the initramfs")
    require(MANIFEST, "the test list of the initramfs")
    require(INSN_ELF, "the instruction-level test image")
    # "kernel" in --only names the checks of the kernel binary (kernel_checks)
    kernel = not args.only or "kernel" in args.only.split(",")
    if args.only:
        listed = [m[0] for m in ktap.load_manifest(MANIFEST)]
        ONLY[:] = [p for p in args.only.split(",") if p != "kernel"]
        if not ONLY:
            names = []
        for prog in ONLY:
            if prog not in listed:
                die(f"--only: {prog} is not in the test list ({os.path.relpath(MANIFEST, TOP)})")
        for n in names:
            if plats[n]["kind"] == "bochs":
                die(f"--only: {n} is Bochs, whose ISO fixes the kernel command line")
    os.makedirs(LOGS, exist_ok=True)

    out = {}
    threads = []
    # Bochs is slow and single-threaded: boot it beside the QEMU platforms.
    for n in names:
        if plats[n]["kind"] == "bochs":
            t = threading.Thread(target=run_platform,
                                 args=(n, plats[n], out, args.expect_log))
            t.start()
            threads.append(t)
    for n in names:
        if plats[n]["kind"] != "bochs":
            run_platform(n, plats[n], out, args.expect_log)
    # uibt exec boots the kernel under test on qemu-ibt's CPU (make test-debug:
    # the debug kernel, platform qemu-ibt-debug).
    if {"qemu-ibt", "qemu-ibt-debug"} & set(names) and not ONLY:
        require(exec_test.BIN, "uibt exec's test programs")
        say("uibt: uibt exec's own tests (./uibt exec on qemu-ibt, tests/exec)")
        res = exec_test.run_all(say)
        c = count(res)
        say(f"uibt: exec: {c['pass']} passed, {c['fail']} failed")
        out["exec"] = (res, 0)
    if args.selftest:
        say("uibt: harness self-test (parser unit tests, injected failure and panic on qemu)")
        res = harness_selftest(plats)
        c = count(res)
        say(f"uibt: harness: {c['pass']} passed, {c['fail']} failed")
        out["harness"] = (res, 0)
    if kernel:
        say("uibt: kernel: looking for stray ENDBR64 in vmlinux")
        out["kernel"] = (kernel_checks(), 0)
        names = names + ["kernel"]
    for t in threads:
        t.join()
    cmp = compare(out)
    if cmp:
        out["compare"] = (cmp, 0)
        names = names + ["compare"]

    total = {"pass": 0, "fail": 0, "skip": 0}
    say("")
    extra = (["exec"] if "exec" in out else []) + (["harness"] if args.selftest else [])
    for n in names + extra:
        res, elapsed = out[n]
        for r in res:
            if r.status == "fail":
                say(f"  {n}: {r.line()}")
        c = count(res)
        for k in total:
            total[k] += c[k]
        say(f"{n}: {c['pass']} passed, {c['fail']} failed, {c['skip']} skipped")
    say(f"logs: {os.path.relpath(LOGS, TOP)}/<platform>/console.log and results.txt")
    say(f"{total['pass']} passed, {total['fail']} failed, {total['skip']} skipped")
    return 1 if total["fail"] else 0


KINSN = os.path.join(BUILD, "plugin", "libkinsn.so")
# The operations of bench.c whose kernel instructions the plugin counts;
# a sample's tag is OP * 2 + IBT.
KBENCH_OPS = {1: "exec of a static program", 2: "signal delivered and returned",
              3: "pipe round trip (2 switches)"}
# The goal: IBT costs the kernel less than this, in instructions per op.
KBENCH_GOAL = 1.0
# A count is the floor when at least this share of the samples have it.
FLOOR_SHARE = 0.01


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def floor_count(xs):
    """The smallest count that at least FLOOR_SHARE of the samples (and two)
    have: the operation's own cost, without the timer interrupts and other
    work that land in some samples, and without the rare samples that skip
    part of the usual work (a pipe round trip whose wake-up found the reader
    already running), whose minimum differs from run to run."""
    seen = {}
    for x in xs:
        seen[x] = seen.get(x, 0) + 1
    need = max(2, int(FLOOR_SHARE * len(xs) + 0.999))
    common = [x for x, n in seen.items() if n >= need]
    return min(common) if common else min(xs)


def read_samples(path):
    """The plugin's samples: {(op, ibt): [count, ...]}."""
    samples = {}
    with open(path) as f:
        for line in f:
            tag, n = (int(w) for w in line.split())
            samples.setdefault((tag >> 1, tag & 1), []).append(n)
    return samples


def kbench_table(samples):
    """The table of kernel instructions per op; returns (lines, floors,
    whether every op is under the goal)."""
    lines = [f"  {'kernel instructions per op':30s} {'IBT on':>8s} {'IBT off':>8s} "
             f"{'diff':>7s}  under {KBENCH_GOAL:g}%  (on, off: n; min; median)"]
    ok = True
    floors = {}
    for op, what in KBENCH_OPS.items():
        on, off = samples.get((op, 1)), samples.get((op, 0))
        if not on or not off:
            lines.append(f"  {what:30s} no samples with IBT both on and off")
            ok = False
            continue
        fon, foff = floor_count(on), floor_count(off)
        floors[op] = (fon, foff)
        diff = 100.0 * (fon - foff) / foff
        under = diff < KBENCH_GOAL
        ok = ok and under
        lines.append(f"  {what:30s} {fon:8d} {foff:8d} {diff:+6.2f}%  "
                     f"{'yes' if under else 'NO':8s}  ({len(on)}, {len(off)}; "
                     f"{min(on)}, {min(off)}; {median(on)}, {median(off)})")
    return lines, floors, ok


def cmd_bench(args):
    """Time the bench workload with IBT enforced and not, and count the
    kernel's instructions per operation with a TCG plugin, in one boot."""
    plats = load_platforms()
    plat = dict(plats[args.platform])
    require(KERNEL, "the kernel")
    require(INITRD, "the initramfs")
    if not os.path.exists(args.plugin):
        die(f"the instruction-counting plugin is missing ({args.plugin}): "
            "'make bench' builds it")
    results = []
    for run in range(1, args.runs + 1):
        workdir = os.path.join(LOGS, f"bench-{args.platform}" + (f"-{run}" if run > 1 else ""))
        os.makedirs(workdir, exist_ok=True)
        samples_file = os.path.join(workdir, "kinsn.txt")
        if os.path.exists(samples_file):
            os.unlink(samples_file)
        # One CPU, so that the plugin's counter counts one CPU's instructions.
        plat["smp"] = 1
        plat["qemu_args"] = ["-plugin", f"{args.plugin},out={samples_file}"]
        say(f"uibt: bench on {args.platform} (-smp 1, {os.path.relpath(args.plugin, TOP)}): "
            f"{args.rounds} rounds of {args.iterations} calls, then {args.krounds} rounds "
            f"of {args.execs} execs, {args.reps} signals, {args.reps} pipe round trips, "
            f"IBT on and off alternating; console: "
            f"{os.path.relpath(os.path.join(workdir, 'console.log'), TOP)}")
        # norandmaps: with the address space laid out at random, exec's page
        # table work differs from one exec to the next by thousands of
        # instructions.
        kbench = f"{args.krounds},{args.execs},{args.reps}"
        text, elapsed = boot(args.platform, plat, "linux", "bench", workdir,
                             extra_cmdline=f"uibt.bench={args.rounds},{args.iterations} "
                             f"uibt.kbench={kbench} norandmaps")
        runs = {0: [], 1: []}
        for m in re.finditer(r"bench: ibt=(\d) indirect_ms=(\d+) straight_ms=(\d+)", text):
            runs[int(m.group(1))].append((int(m.group(2)), int(m.group(3))))
        if not runs[0] or not runs[1]:
            die(f"bench: no results with IBT both on and off (see {workdir})")
        kruns = re.findall(r"kbench: op=(\w+) ibt=(\d) n=\d+( failed)?", text)
        if any(f for _, _, f in kruns):
            die(f"bench: a counted operation failed (see {workdir}/console.log)")
        if {(op, ibt) for op, ibt, _ in kruns} != {(op, ibt) for op in ("exec", "signal", "pipe")
                                                   for ibt in "01"}:
            die(f"bench: the counted operations did not all run with IBT on and off "
                f"(see {workdir}/console.log)")
        if not os.path.exists(samples_file):
            die(f"bench: the plugin wrote no samples ({samples_file})")

        for kind, idx in (("indirect calls", 0), ("no indirect branch", 1)):
            on = median([r[idx] for r in runs[1]])
            off = median([r[idx] for r in runs[0]])
            say(f"  {kind:20s} IBT on {on:6d} ms, off {off:6d} ms: "
                f"{100.0 * (on - off) / off:+.1f}%  (medians of {len(runs[1])})")
        lines, floors, ok = kbench_table(read_samples(samples_file))
        for line in lines:
            say(line)
        say(f"  IBT's cost to the kernel is {'under' if ok else 'NOT under'} "
            f"{KBENCH_GOAL:g}% on each operation; boot to power-off: {elapsed:.0f} s; "
            f"samples: {os.path.relpath(samples_file, TOP)}")
        results.append(floors)
    if args.runs > 1:
        say(f"uibt: bench: the counts of the {args.runs} runs, IBT on / off:")
        for op, what in KBENCH_OPS.items():
            per_run = [r.get(op) for r in results]
            if None in per_run:
                continue
            spread = max(max(abs(a[i] - b[i]) for a in per_run for b in per_run)
                         for i in (0, 1))
            verdict = "the same" if spread == 0 else \
                f"differ by up to {spread} ({100.0 * spread / per_run[0][1]:.3f}%)"
            say(f"  {what:30s} {', '.join(f'{on} / {off}' for on, off in per_run)}: {verdict}")
    return 0


def cmd_run(args):
    plats = load_platforms()
    name = args.platform
    if name not in plats:
        die(f"unknown platform {name}; known: {', '.join(plats)}")
    plat = plats[name]
    require(KERNEL, "the kernel")
    require(INITRD, "the initramfs")
    if plat["kind"] == "qemu":
        say(f"uibt: booting {name} ({plat['description']})")
        say("uibt: to leave, type 'reboot -f' in the guest shell, or press Ctrl-A then X")
        cmd = qemu_cmd(plat, "linux", "demo", None, interactive=True)
    else:
        workdir = os.path.join(LOGS, f"run-{name}")
        os.makedirs(workdir, exist_ok=True)
        iso = os.path.join(GUEST, "uibt-demo-batch.iso")
        require(iso, "the Bochs demo ISO")
        console = os.path.join(workdir, "console.log")
        say(f"uibt: booting {name} ({plat['description']}), about 30 s")
        say(f"uibt: Bochs shows its console in a file: {os.path.relpath(console, TOP)}")
        say("uibt: the demo runs, then the harness stops Bochs (its terminal display cannot host a shell)")
        text, _ = boot(name, plat, "linux", "demo-batch", workdir)
        sys.stdout.write(text)
        return 0
    return subprocess.call(cmd)


def main():
    if sys.argv[1:2] == ["cc"]:
        # gcc's options are not ours to parse
        return uibt_exec.cmd_cc(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("test", help="boot each platform and run the suite")
    t.add_argument("--platforms", help="comma-separated (default: all)")
    t.add_argument("--selftest", action="store_true",
                   help="also check that the harness catches failures")
    t.add_argument("--expect-log", action="append", default=[], metavar="REGEX",
                   help="fail unless each Linux boot's console matches REGEX")
    t.add_argument("--only", metavar="PROG[,PROG...]",
                   help="run only these programs of the Linux suite (and not "
                   "uibt exec's tests); 'kernel' names the checks of vmlinux "
                   "itself (no stray ENDBR64)")
    r = sub.add_parser("run", help="boot into the demo and a shell")
    r.add_argument("--platform", default="qemu")
    b = sub.add_parser("bench", help="time a workload with IBT on and off")
    b.add_argument("--platform", default="qemu-ibt")
    b.add_argument("--rounds", type=int, default=5)
    b.add_argument("--iterations", type=int, default=20000000)
    b.add_argument("--plugin", default=KINSN,
                   help="the kernel instruction counter (tools/plugin/kinsn.c)")
    b.add_argument("--krounds", type=int, default=2,
                   help="rounds of counted operations, IBT on and off")
    b.add_argument("--execs", type=int, default=100, help="execs per round")
    b.add_argument("--reps", type=int, default=500,
                   help="signals, and pipe round trips, per round")
    b.add_argument("--runs", type=int, default=1,
                   help="boot this many times; the minima must be the same")
    uibt_exec.add_parser(sub)
    sub.add_parser("bench-exec", help="time ./uibt exec of a static hello-world")
    c = sub.add_parser("cmdline", help="print the kernel command line of a mode")
    c.add_argument("mode", choices=["test", "demo", "demo-batch"])
    args = ap.parse_args()
    if args.cmd == "cmdline":
        print(cmdline_for(args.mode))
        return 0
    if args.cmd == "exec":
        return uibt_exec.cmd_exec(args)
    if args.cmd == "bench-exec":
        return uibt_exec.cmd_bench()
    if shutil.which("qemu-system-x86_64") is None:
        die("qemu-system-x86_64 is missing: run 'make deps'")
    return {"test": cmd_test, "run": cmd_run, "bench": cmd_bench}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
