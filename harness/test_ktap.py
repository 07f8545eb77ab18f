"""Unit tests of the console parser and the judging rules (harness/ktap.py)."""

import json
import os
import sys
import tempfile
import time
import unittest

import ktap
import uibt

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# kibt's allowances as guest/tests should have them: the "Missing ENDBR" of
# its two targets and the WARN do_kernel_cp_fault() prints for them, whose
# location is the target itself (regs->ip), at +0x0.
KIBT_ALLOWED = [r"Missing ENDBR: kibt_noendbr\+0x0/", r"Missing ENDBR: nr_processes\+0x0/",
                r"WARNING: CPU: [0-9]+ PID: [0-9]+ at arch/x86/kernel/cet\.c:[0-9]+ kibt_noendbr\+0x0/",
                r"WARNING: CPU: [0-9]+ PID: [0-9]+ at arch/x86/kernel/cet\.c:[0-9]+ nr_processes\+0x0/"]

# What kibt.sh's mode=noendbr provokes on a 6.12 kernel booted with ibt=warn.
KIBT_WARN = """Missing ENDBR: kibt_noendbr+0x0/0x10 [kibt]
------------[ cut here ]------------
WARNING: CPU: 1 PID: 57 at arch/x86/kernel/cet.c:148 kibt_noendbr+0x0/0x10 [kibt]
Modules linked in: kibt(O+)
CPU: 1 UID: 0 PID: 57 Comm: insmod Tainted: G           O       6.12.118 #1
RIP: 0010:kibt_noendbr+0x0/0x10 [kibt]
Code: cc cc cc cc cc cc cc cc cc cc cc cc cc cc cc cc <b8> 2a 00 00 00 c3 cc cc
RSP: 0018:ffffc900001f3c48 EFLAGS: 00010246
Call Trace:
 <TASK>
 kibt_init+0x45/0x1000 [kibt]
 </TASK>
---[ end trace 0000000000000000 ]---
kibt: call returned 42
"""

MANIFEST = [
    ("kibt/kibt.sh", "kernel_ibt", KIBT_ALLOWED, {}),
    ("ibt/ibt_basic", "user_ibt", [], {}),
    ("ibt/ibt_nocpu", "!user_ibt", [], {}),
    ("misc", "-", [], {"c": "user_ibt"}),
]


def console(kibt="ok", basic="ok", nocpu="ok", misc="ok", extra="", done=True):
    def block(name, status, subs):
        lines = [f"uibt: begin {name}", "  KTAP version 1", f"  1..{len(subs)}"]
        for i, s in enumerate(subs, 1):
            lines.append(f"  {s.replace('N', str(i))}")
        lines.append(f"uibt: end {name} rc=0")
        lines.append(status)
        return lines

    out = ["Linux version 6.12", "KTAP version 1", "1..4"]
    out += block("kibt/kibt.sh", "ok 1 kibt/kibt.sh", [f"{kibt} N boot_detected"])
    out += block("ibt/ibt_basic", "ok 2 ibt/ibt_basic", [f"{basic} N runs_with_ibt"])
    out += block("ibt/ibt_nocpu", "ok 3 ibt/ibt_nocpu", [f"{nocpu} N status_einval"])
    out += block("misc", f"{misc} 4 misc", ["ok N a", "ok N b"])
    out += extra.splitlines()
    if done:
        out.append("uibt: done")
    return "\n".join(out) + "\n"


def judge(text, features, manifest=MANIFEST, **kw):
    return ktap.results(ktap.parse(text), manifest, set(features), **kw)


def statuses(res):
    return [(r.program, r.name, r.status) for r in res]


def kibt_logs_after_allowed_warn(block):
    """The kernel-log results of a console where kibt's allowed WARN is
    followed by block."""
    text = console(kibt="ok N x").replace(
        "uibt: end kibt/kibt.sh", KIBT_WARN + block + "uibt: end kibt/kibt.sh")
    res = judge(text, {"kernel_ibt", "user_ibt"})
    return [r for r in res if r.name == "(kernel log)"]


class Parse(unittest.TestCase):
    def test_all_pass_where_features_exist(self):
        res = judge(console(nocpu="ok N x # SKIP !user_ibt: has it"),
                    {"kernel_ibt", "user_ibt"})
        self.assertEqual([r.status for r in res], ["pass", "pass", "skip", "pass", "pass"])

    def test_skips_where_features_are_absent(self):
        res = judge(console(kibt="ok N x # SKIP kernel_ibt: none",
                            basic="ok N y # SKIP user_ibt: none"), set())
        self.assertEqual([r.status for r in res], ["skip", "skip", "pass", "pass", "pass"])

    def test_not_ok_subtest_fails(self):
        res = judge(console(misc="not ok", extra=""), set())
        self.assertIn(("misc", "(exit)", "fail"), statuses(res))

    def test_failing_subtest_counted_once(self):
        text = console().replace("  ok 1 a", "  not ok 1 a")
        res = judge(text, {"kernel_ibt", "user_ibt"})
        self.assertEqual(sum(r.status == "fail" for r in res), 2)  # a, and nocpu passing with user_ibt

    def test_skip_where_feature_exists_fails(self):
        res = judge(console(basic="ok N y # SKIP user_ibt: none"), {"user_ibt"})
        self.assertIn(("ibt/ibt_basic", "y", "fail"), statuses(res))

    def test_pass_where_feature_is_absent_fails(self):
        res = judge(console(), set())
        self.assertIn(("kibt/kibt.sh", "boot_detected", "fail"), statuses(res))

    def test_missing_program_fails(self):
        text = console()
        text = text[:text.index("uibt: begin misc")]
        res = judge(text, set())
        self.assertIn(("misc", "(program)", "fail"), statuses(res))
        self.assertIn(("guest", "(finished)", "fail"), statuses(res))

    def test_short_plan_fails(self):
        text = console().replace("  ok 2 b\n", "")
        res = judge(text, set())
        self.assertIn(("misc", "(plan)", "fail"), statuses(res))

    def test_unexpected_warn_fails_the_running_test(self):
        text = console(nocpu="ok N x # SKIP !user_ibt: has it").replace(
            "uibt: end misc", "WARNING: CPU: 0 PID: 1 at mm/foo.c:1 bar+0x0/0x10\n"
            "RIP: 0010:bar+0x0/0x10\nuibt: end misc")
        res = judge(text, {"kernel_ibt", "user_ibt"})
        fails = [r for r in res if r.status == "fail"]
        self.assertEqual([(r.program, r.name) for r in fails],
                         [("misc", "(kernel log)")])

    def test_lock_and_rcu_reports_fail_the_running_test(self):
        reports = [
            "WARNING: possible circular locking dependency detected",
            "WARNING: possible recursive locking detected",
            "WARNING: inconsistent lock state",
            "WARNING: suspicious RCU usage",
            "WARNING: bad unlock balance detected!",
            "BUG: sleeping function called from invalid context at mm/x.c:1",
            "INFO: task ibt_threads:81 blocked for more than 120 seconds.",
            "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
        ]
        for report in reports:
            text = console(nocpu="ok N x # SKIP !user_ibt: has it").replace(
                "uibt: end misc", f"{report}\nuibt: end misc")
            res = judge(text, {"kernel_ibt", "user_ibt"})
            fails = [(r.program, r.name) for r in res if r.status == "fail"]
            self.assertEqual(fails, [("misc", "(kernel log)")], report)

    def test_allowed_warn_passes(self):
        text = console(kibt="ok N x").replace(
            "uibt: end kibt/kibt.sh", KIBT_WARN + "uibt: end kibt/kibt.sh")
        res = judge(text, {"kernel_ibt", "user_ibt"})
        self.assertFalse([r for r in res if r.name == "(kernel log)"])

    def test_allowed_warn_only_inside_its_test(self):
        text = console().replace("uibt: end misc", "Missing ENDBR: x+0x0/0x1\nuibt: end misc")
        res = judge(text, set())
        self.assertIn(("misc", "(kernel log)", "fail"), statuses(res))

    def test_unlisted_program_counts(self):
        text = console().replace("uibt: done", "  KTAP version 1\n  1..1\n  not ok 1 injected failure\n"
                                 "not ok 5 inject-fail\nuibt: done")
        res = judge(text, set())
        self.assertIn(("inject-fail", "injected failure", "fail"), statuses(res))

    def test_subtest_needs_override(self):
        base = console(kibt="ok N x # SKIP kernel_ibt: none",
                       basic="ok N y # SKIP user_ibt: none").replace("  1..2", "  1..3")
        res = judge(base.replace("  ok 2 b", "  ok 2 b\n  ok 3 c"), set())
        self.assertIn(("misc", "c", "fail"), statuses(res))
        res = judge(base.replace("  ok 2 b", "  ok 2 b\n  ok 3 c # SKIP user_ibt: no"), set())
        self.assertIn(("misc", "c", "skip"), statuses(res))
        self.assertIn(("misc", "b", "pass"), statuses(res))

    def test_manifest_file(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("# c\nprog user_ibt A: x|B\nprog:sub -\nother -\n")
            f.flush()
            m = ktap.load_manifest(f.name)
        self.assertEqual(m, [("prog", "user_ibt", ["A: x", "B"], {"sub": "-"}),
                             ("other", "-", [], {})])

    def test_panic_fails(self):
        text = console(done=False) + "Kernel panic - not syncing: Attempted to kill init!\n"
        res = judge(text, set())
        self.assertIn(("boot", "(kernel log)", "fail"), statuses(res))

    def test_timestamps_and_carriage_returns(self):
        text = console().replace("uibt: begin misc", "[    1.234567] uibt: begin misc\r")
        text = text.replace("uibt: end misc", "[    1.5] uibt: end misc")
        res = judge(text.replace("  ok 1 a", "  ok 1 a\r"), set())
        self.assertIn(("misc", "a", "pass"), statuses(res))

    # --- issue 11: harness holes -------------------------------------------

    def in_misc(self, lines):
        """Judge a console whose "misc" test logs these kernel lines."""
        text = console(nocpu="ok N x # SKIP !user_ibt: has it").replace(
            "uibt: end misc", f"{lines}\nuibt: end misc")
        return judge(text, {"kernel_ibt", "user_ibt"})

    def test_msr_allocation_oom_and_dropped_messages_fail(self):
        reports = [
            "unchecked MSR access error: WRMSR to 0x6a2 (tried to write 0x0000000000000004) "
            "at rIP: 0xffffffff81034f04 (native_write_msr+0x4/0x20)",
            "unchecked MSR access error: RDMSR from 0x6a0 at rIP: 0xffffffff81034f04 "
            "(native_read_msr+0x4/0x20)",
            "ibt_fuzz: page allocation failure: order:10, mode:0xcc0(GFP_KERNEL), "
            "nodemask=(null)",
            "Out of memory: Killed process 81 (ibt_threads) total-vm:4100kB, anon-rss:0kB",
            "** 123 printk messages dropped **",
        ]
        for report in reports:
            fails = [(r.program, r.name) for r in self.in_misc(report) if r.status == "fail"]
            self.assertEqual(fails, [("misc", "(kernel log)")], report)

    def test_two_boots_fail(self):
        # Bochs resets on a triple fault and boots again: the second boot may
        # well run every test and say it is done.
        text = "Linux version 6.12.118 (x) #1\n[    0.000000] Linux version 6.12.118 (x) #1\n"
        res = judge(text + console(nocpu="ok N x # SKIP !user_ibt: has it"),
                    {"kernel_ibt", "user_ibt"})
        self.assertIn(("boot", "(one boot)", "fail"), statuses(res))
        res = judge(console(nocpu="ok N x # SKIP !user_ibt: has it"), {"kernel_ibt", "user_ibt"})
        self.assertNotIn(("boot", "(one boot)", "fail"), statuses(res))

    def test_bochs_stops_on_triple_fault(self):
        with tempfile.TemporaryDirectory() as d:
            uibt.bochs_files({"cpu_model": "tigerlake"}, d, "x.iso", "console.log")
            with open(os.path.join(d, "bochsrc")) as f:
                cpu = [line for line in f if line.startswith("cpu:")]
        self.assertEqual(len(cpu), 1)
        self.assertIn("reset_on_triple_fault=0", cpu[0])

    def basic_says(self, nested):
        """A console where ibt/ibt_basic prints these lines and exits 0."""
        old = "  KTAP version 1\n  1..1\n  ok 1 runs_with_ibt\n"
        text = console(nocpu="ok N x # SKIP !user_ibt: has it")
        self.assertIn(old, text)
        return text.replace(old, "".join(f"  {line}\n" for line in nested))

    def test_silent_program_fails(self):
        for features in ({"kernel_ibt", "user_ibt"}, set()):
            res = judge(self.basic_says([]), features)
            bad = [r for r in res if r.program == "ibt/ibt_basic"]
            self.assertEqual([(r.name, r.status) for r in bad], [("(program)", "fail")])
            self.assertIn("printed no KTAP", bad[0].reason)

    def test_empty_plan_fails_where_the_platform_must_run_it(self):
        for nested in (["KTAP version 1", "1..0"],
                       ["KTAP version 1", "1..0 # SKIP user_ibt: not supported"]):
            res = judge(self.basic_says(nested), {"kernel_ibt", "user_ibt"})
            bad = [r for r in res if r.program == "ibt/ibt_basic"]
            self.assertEqual([(r.name, r.status) for r in bad], [("(program)", "fail")], nested)
            self.assertIn("reported no tests", bad[0].reason)
            self.assertIn("user_ibt", bad[0].reason)

    def test_empty_plan_skips_where_the_platform_lacks_it(self):
        text = self.basic_says(["KTAP version 1", "1..0 # SKIP user_ibt: not supported"])
        res = judge(text, set())
        self.assertIn(("ibt/ibt_basic", "(program)", "skip"), statuses(res))
        basic = [r for r in res if r.program == "ibt/ibt_basic"][0]
        self.assertEqual(basic.reason, "user_ibt: not supported")

    def test_empty_plan_with_an_allowed_skip_reason_skips(self):
        text = self.basic_says(["1..0 # SKIP bochs deviation: no"])
        res = judge(text, {"kernel_ibt", "user_ibt"}, skip_allowed=["bochs deviation"])
        self.assertIn(("ibt/ibt_basic", "(program)", "skip"), statuses(res))

    def test_warn_after_done_fails_the_boot(self):
        text = console(nocpu="ok N x # SKIP !user_ibt: has it") + (
            "WARNING: CPU: 1 PID: 81 at kernel/exit.c:1 do_exit+0x1/0x2\n"
            "reboot: Restarting system\n")
        res = judge(text, {"kernel_ibt", "user_ibt"})
        fails = [(r.program, r.name) for r in res if r.status == "fail"]
        self.assertEqual(fails, [("boot", "(kernel log after done)")])

    def test_oops_after_an_allowed_warn_fails(self):
        # The oops' title is one INCIDENT does not know (the pre-6.9 format),
        # so only its RIP: and Code: lines can catch it.
        oops = ("int3: 0000 [#1] PREEMPT SMP NOPTI\n"
                "CPU: 0 UID: 0 PID: 57 Comm: insmod Tainted: G        W  O  6.12.118 #1\n"
                "RIP: 0010:kibt_init+0x50/0x1000 [kibt]\n"
                "Code: 00 00 cc <cc> 90 90 90 90\n")
        logs = kibt_logs_after_allowed_warn(oops)
        self.assertEqual([(r.program, r.status) for r in logs], [("kibt/kibt.sh", "fail")])
        self.assertIn("RIP: 0010:kibt_init", logs[0].reason)

    def test_kibt_allowance_is_only_the_missing_endbr_warn(self):
        unexpected = ("------------[ cut here ]------------\n"
                      "Unexpected kernel mode #CP, error_code: endbranch\n"
                      "WARNING: CPU: 0 PID: 57 at arch/x86/kernel/cet.c:42 "
                      "do_unexpected_cp+0x3c/0x50\n"
                      "RIP: 0010:do_unexpected_cp+0x3c/0x50\n"
                      "---[ end trace 0000000000000000 ]---\n")
        logs = kibt_logs_after_allowed_warn(unexpected)
        self.assertEqual(len(logs), 1)
        self.assertIn("do_unexpected_cp", logs[0].reason)
        self.assertIn("Unexpected kernel mode #CP", logs[0].reason)

    def test_guest_tests_narrow_the_kibt_allowance(self):
        # The test list the guest runs must allow kibt's Missing ENDBR WARN,
        # and not the "Unexpected #CP" one (nor any other WARN in cet.c).
        manifest = ktap.load_manifest(os.path.join(TOP, "guest", "tests"))
        kibt = [m for m in manifest if m[0] == "kibt/kibt.sh"]
        self.assertEqual(len(kibt), 1)
        sealed = KIBT_WARN.replace("kibt_noendbr+0x0/0x10 [kibt]", "nr_processes+0x0/0x20")
        for good in (KIBT_WARN, sealed):
            con = ktap.parse(console(kibt="ok N x").replace(
                "uibt: end kibt/kibt.sh", good + "uibt: end kibt/kibt.sh"))
            res = ktap.results(con, kibt, {"kernel_ibt"})
            self.assertFalse([r for r in res if r.name == "(kernel log)"], good)
        unexpected = ("------------[ cut here ]------------\n"
                      "Unexpected kernel mode #CP, error_code: endbranch\n"
                      "WARNING: CPU: 0 PID: 57 at arch/x86/kernel/cet.c:42 "
                      "do_unexpected_cp+0x3c/0x50\n")
        con = ktap.parse(console(kibt="ok N x").replace(
            "uibt: end kibt/kibt.sh", unexpected + "uibt: end kibt/kibt.sh"))
        res = ktap.results(con, kibt, {"kernel_ibt"})
        self.assertIn(("kibt/kibt.sh", "(kernel log)", "fail"), statuses(res))

    def bochs_boot(self, report):
        with open(os.path.join(TOP, "harness", "platforms.json")) as f:
            bochs = json.load(f)["bochs"]
        text = report + console(nocpu="ok N x # SKIP !user_ibt: has it")
        res = judge(text, {"kernel_ibt", "user_ibt"},
                    boot_allowed=bochs["boot_allowed_log"])
        return [(r.program, r.name) for r in res if r.status == "fail"]

    def test_bochs_allows_only_its_xsave_size_warn(self):
        size = ("------------[ cut here ]------------\n"
                "XSAVE consistency problem: size 1088 != kernel_size 1096\n"
                "WARNING: CPU: 0 PID: 0 at arch/x86/kernel/fpu/xstate.c:605 "
                "fpu__init_system_xstate+0x5d6/0x7a0\n"
                "RIP: 0010:fpu__init_system_xstate+0x5d6/0x7a0\n"
                "---[ end trace 0000000000000000 ]---\n"
                "x86/fpu: CPUID[0D, 00]: eax=000002e7 ebx=00000440 ecx=00000440 edx=00000000\n")
        self.assertEqual(self.bochs_boot(size), [])
        others = [size.replace("size 1088 != kernel_size 1096", "No structure for xstate: 11"),
                  size.replace("XSAVE consistency problem: size 1088 != kernel_size 1096\n", "")]
        for other in others:
            self.assertEqual(self.bochs_boot(other), [("boot", "(kernel log)")], other)


class Only(unittest.TestCase):
    """test --only: a boot that runs some programs is judged on those."""

    LIST = "ibt/ibt_basic user_ibt\nibt/ibt_nocpu !user_ibt\nmisc -\nmisc:c user_ibt\n"

    def judge_only(self, only, text):
        plat = {"features": ["user_ibt"]}
        saved = uibt.MANIFEST, uibt.ONLY[:]
        with tempfile.TemporaryDirectory() as d:
            uibt.MANIFEST = os.path.join(d, "tests")
            with open(uibt.MANIFEST, "w") as f:
                f.write(self.LIST)
            uibt.ONLY[:] = only
            try:
                return statuses(uibt.judge(plat, "linux", text))
            finally:
                uibt.MANIFEST, uibt.ONLY[:] = saved

    def one_program(self, status):
        return "\n".join(["Linux version 6.12", "KTAP version 1", "1..1",
                          "uibt: begin misc", "  KTAP version 1", "  1..2",
                          f"  {status} 1 a", "  ok 2 c", "uibt: end misc rc=0",
                          f"{status} 1 misc", "uibt: done", ""])

    def test_programs_left_out_are_not_missing(self):
        res = self.judge_only(["misc"], self.one_program("ok"))
        self.assertIn(("misc", "a", "pass"), res)
        self.assertNotIn("fail", [r[2] for r in res], res)
        self.assertNotIn("ibt/ibt_basic", [r[0] for r in res])

    def test_a_failure_of_a_program_run_counts(self):
        res = self.judge_only(["misc"], self.one_program("not ok"))
        self.assertIn(("misc", "a", "fail"), res)

    def test_without_only_the_others_are_missing(self):
        res = self.judge_only([], self.one_program("ok"))
        self.assertIn("fail", [r[2] for r in res if r[0] == "ibt/ibt_basic"], res)


# A stand-in for QEMU: writes the console it is given (-serial file:PATH),
# then behaves as the scenario says after the done marker.
FAKE_EMULATOR = """#!{python}
import sys, time
path = sys.argv[sys.argv.index("-serial") + 1][len("file:"):]
def put(*lines):
    with open(path, "a") as f:
        f.write("".join(line + "\\n" for line in lines))
put("Linux version 6.12.118", "KTAP version 1", "1..0", "uibt: done")
{after}
"""


class IbtSelftestRace(unittest.TestCase):
    """A boot whose kernel IBT selftest failed is tried once more, only
    where the platform provides kernel IBT."""

    def test_failed_selftest_on_an_ibt_platform(self):
        text = "CET detected\nIBT selftest: Failed!\nuibt: done\n"
        self.assertTrue(uibt.lost_ibt_selftest({"features": ["kernel_ibt"]}, text))

    def test_not_on_a_platform_without_ibt(self):
        text = "IBT selftest: Failed!\n"
        self.assertFalse(uibt.lost_ibt_selftest({"features": []}, text))

    def test_not_when_it_passed(self):
        text = "CET detected: Indirect Branch Tracking enabled\n"
        self.assertFalse(uibt.lost_ibt_selftest({"features": ["kernel_ibt"]}, text))


class Boot(unittest.TestCase):
    """The harness's boot loop, on a fake emulator."""

    def boot(self, after):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "fake-qemu")
            with open(fake, "w") as f:
                f.write(FAKE_EMULATOR.format(python=sys.executable, after=after))
            os.chmod(fake, 0o755)
            plat = {"kind": "qemu", "qemu": fake, "cpu": "max", "name": "fake"}
            start = time.time()
            text, _ = uibt.boot("fake", plat, "linux", "test", os.path.join(d, "logs"),
                                timeout=60, progress=False)
            return text, time.time() - start

    def test_warn_after_done_is_read(self):
        # The guest tears down after "uibt: done", then reboots; Bochs would
        # not exit on that reboot, neither does this fake.
        text, took = self.boot('time.sleep(1)\n'
                               'put("WARNING: CPU: 1 PID: 81 at kernel/exit.c:1 do_exit+0x1/0x2")\n'
                               'put("reboot: Restarting system")\n'
                               'time.sleep(60)')
        self.assertIn("WARNING: CPU: 1 PID: 81", text)
        self.assertLess(took, uibt.DONE_GRACE + 4)
        res = ktap.results(ktap.parse(text), [], set())
        self.assertIn(("boot", "(kernel log after done)", "fail"), statuses(res))

    def test_grace_after_done_is_bounded(self):
        grace = uibt.DONE_GRACE
        uibt.DONE_GRACE = 0.5
        try:
            text, took = self.boot("time.sleep(60)")
        finally:
            uibt.DONE_GRACE = grace
        self.assertIn("uibt: done", text)
        self.assertLess(took, 8)


if __name__ == "__main__":
    unittest.main()
