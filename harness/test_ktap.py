"""Unit tests of the console parser and the judging rules (harness/ktap.py)."""

import unittest

import ktap

MANIFEST = [
    ("kibt/kibt.sh", "kernel_ibt", ["Missing ENDBR: ", r"WARNING: CPU: \d+ PID: \d+ at arch/x86/kernel/cet\.c"], {}),
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


def judge(text, features):
    return ktap.results(ktap.parse(text), MANIFEST, set(features))


def statuses(res):
    return [(r.program, r.name, r.status) for r in res]


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
            "uibt: end kibt/kibt.sh",
            "Missing ENDBR: kibt_noendbr+0x0/0x10 [kibt]\n"
            "WARNING: CPU: 0 PID: 57 at arch/x86/kernel/cet.c:102 do_kernel_cp_fault+0x1/0x2\n"
            "RIP: 0010:kibt_noendbr+0x0/0x10\nuibt: end kibt/kibt.sh")
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


if __name__ == "__main__":
    unittest.main()
