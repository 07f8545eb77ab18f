"""Parse a guest console log: KTAP results and kernel incidents.

The guest's run-tests prints one top-level KTAP document; each test program's
own KTAP output is nested above its top-level result, indented by two spaces.
Kernel messages share the console; the guest writes "uibt: begin NAME" and
"uibt: end NAME" to /dev/kmsg around each program, so that a WARN, BUG, oops
or "Missing ENDBR" can be charged to the program that was running.
"""

import re
from dataclasses import dataclass, field

RESULT = re.compile(r"^(not ok|ok) (\d+)(?: -)?\s*([^#]*?)\s*(?:#\s*(.*))?$")
# A plan may carry a directive: "1..0 # SKIP why" skips the whole program.
PLAN = re.compile(r"^1\.\.(\d+)\s*(?:#\s*(.*?)\s*)?$")

# Lines that mean the kernel is unhappy.  Anything matching here fails the
# test that was running (or the boot), unless that test or the platform
# declares it expected.
# Lockdep and RCU reports are titled "WARNING: <what>" without the "CPU:
# N PID: N at" of a WARN(); hung tasks and stalls are "INFO: ...".
# A failed MSR access (a bad wrmsr), an allocation failure or the OOM killer
# are no WARN but just as wrong, and dropped printk messages may have been
# any of these: the log is incomplete, so nothing can be said clean.
INCIDENT = re.compile(
    r"(WARNING: CPU: \d+ PID: \d+ at|BUG: |Oops: |Kernel panic - not syncing|"
    r"Missing ENDBR|general protection fault|KASAN: |UBSAN: |"
    r"IBT selftest: Failed|kernel BUG at|Unable to handle kernel|"
    r"stack segment|double fault|RIP: 0010:|Code: [0-9a-f]{2} |"
    r"WARNING: (possible |inconsistent lock state|bad unlock balance|"
    r"held lock freed|lock held |suspicious RCU usage|Nested lock|"
    r"[A-Z]+IRQ-(safe|unsafe))|"
    r"INFO: task \S+ blocked for more than|"
    r"rcu: INFO: rcu_\w+ (self-)?detected (expedited )?stall|"
    r"unchecked MSR access error|page allocation failure|Out of memory|"
    r"\*\* \d+ printk messages dropped \*\*)")
# The follow-up lines of a WARN or an oops: they belong to the incident
# already counted, not to a new one.
INCIDENT_FOLLOWUP = re.compile(r"(RIP: 0010:|Code: [0-9a-f]{2} )")
# A report ends here (WARN, oops, UBSAN): what follows is no follow-up, so an
# oops after an allowed WARN is counted.
END_TRACE = re.compile(r"---\[ end trace")
# A WARN() with a message prints it between these scissors and its
# "WARNING: CPU: N PID: N at" line; allowances match the message too.
CUT_HERE = "------------[ cut here ]------------"
WARN_MESSAGE_LINES = 4
# Each boot prints this once: a second one means the machine reset (Bochs
# resets on a triple fault) and the guest ran again.
BANNER = re.compile(r"^Linux version ")

BEGIN = re.compile(r"uibt: begin (\S+)")
END = re.compile(r"uibt: end (\S+)")
DONE = "uibt: done"


@dataclass
class Result:
    """One counted result: a leaf test of a program, or a whole program."""
    program: str
    name: str
    status: str  # "pass", "fail" or "skip"
    reason: str = ""

    def line(self):
        s = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[self.status]
        tail = f"  ({self.reason})" if self.reason else ""
        return f"{s}  {self.program}: {self.name}{tail}"


@dataclass
class Program:
    name: str
    status: str = "missing"  # "pass", "fail", "skip" or "missing"
    reason: str = ""
    subtests: list = field(default_factory=list)  # [(status, name, reason)]
    plan: int = None
    plan_directive: str = None  # "SKIP why" of "1..0 # SKIP why"


@dataclass
class Incident:
    program: str  # the test running at the time, or "boot"
    line: str
    message: str = ""  # a WARN()'s message, printed just before its line
    late: bool = False  # logged after the guest said it was done

    def text(self):
        """What allowances match: the WARN's message, a newline, the line."""
        return f"{self.message}\n{self.line}" if self.message else self.line

    def report(self):
        return f"{self.line} [{self.message}]" if self.message else self.line


@dataclass
class Console:
    programs: dict = field(default_factory=dict)  # name -> Program, in order
    plan: int = None
    incidents: list = field(default_factory=list)
    done: bool = False
    boots: int = 0  # "Linux version" lines


def _status(okword, directive):
    if directive and directive.upper().startswith("SKIP"):
        return "skip", directive[4:].strip(" :")
    if okword == "ok":
        return "pass", ""
    return "fail", directive or ""


def strip_kernel_prefix(line):
    """Drop a printk timestamp, should the kernel be built with one."""
    return re.sub(r"^\[\s*\d+\.\d+\]\s?", "", line)


def parse(text, flat=None, done=DONE):
    """Parse a console log into a Console.

    flat: the name of the one program whose plain (not nested) KTAP output
    the log holds, as the instruction-level test image prints it.
    done: the line the guest prints when it has finished.
    """
    con = Console()
    pending = []   # nested results seen since the last top-level result
    sub_plan = None
    sub_directive = None
    running = "boot"
    in_incident = False  # inside a report, before its end-trace line
    warn_msg = None  # lines since a "cut here", while a WARN may follow
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        bare = strip_kernel_prefix(line)
        m = BEGIN.search(bare)
        if m:
            running = m.group(1)
            in_incident, warn_msg = False, None
            continue
        if END.search(bare):
            running = "boot"
            in_incident, warn_msg = False, None
            continue
        if bare.strip() == done:
            con.done = True
            continue
        if BANNER.match(bare):
            con.boots += 1
        if INCIDENT.search(bare):
            if INCIDENT_FOLLOWUP.search(bare) and in_incident:
                continue
            con.incidents.append(Incident(running, bare.strip(),
                                          "\n".join(warn_msg or []), con.done))
            in_incident, warn_msg = True, None
            continue
        if END_TRACE.search(bare):
            in_incident = False
            continue
        if bare.strip() == CUT_HERE:
            warn_msg = []
            continue
        if warn_msg is not None and not line.startswith("  "):
            # A WARN's message is a line or two (indented lines are a test's
            # output, printed meanwhile); anything longer was not one.
            warn_msg = warn_msg + [bare.strip()] if len(warn_msg) < WARN_MESSAGE_LINES else None
        if line.startswith("  "):
            inner = line[2:]
            if inner.startswith("  ") or inner.startswith("#"):
                continue  # deeper nesting and comments belong to the program
            m = PLAN.match(inner)
            if m:
                sub_plan, sub_directive = int(m.group(1)), m.group(2)
                continue
            m = RESULT.match(inner)
            if m:
                st, why = _status(m.group(1), m.group(4))
                pending.append((st, m.group(3) or f"test {m.group(2)}", why))
            continue
        m = PLAN.match(line)
        if m and con.plan is None:
            con.plan = int(m.group(1))
            continue
        m = RESULT.match(line)
        if m:
            name = m.group(3)
            st, why = _status(m.group(1), m.group(4))
            con.programs[name] = Program(name, st, why, pending, sub_plan, sub_directive)
            pending, sub_plan, sub_directive = [], None, None
    if flat:
        subs = [(p.status, p.name, p.reason) for p in con.programs.values()]
        status = "fail" if any(s == "fail" for s, _n, _r in subs) else "pass"
        con.programs = {flat: Program(flat, status, "", subs, con.plan)}
        con.plan = 1
    return con


def results(con, manifest, features, boot_allowed=(), skip_allowed=()):
    """Turn a parsed console into counted Results.

    manifest: [(program, needs, [allowed regexes], {subtest: needs})] in run
    order; the dict overrides the program's needs for single subtests.
    features: the set of features the platform must provide.
    boot_allowed: regexes of kernel messages expected outside any test.
    skip_allowed: skip reasons (prefixes) the platform may give even for what
    it provides: documented deviations of an emulator.
    """
    out = []
    # A program the guest ran but the manifest does not list still counts.
    listed = {m[0] for m in manifest}
    manifest = list(manifest) + [(p, "-", [], {}) for p in con.programs if p not in listed]

    def must_run(needs):
        """Whether the platform must run (not skip) what needs this."""
        if needs in ("-", ""):
            return True
        return (needs.lstrip("!") in features) != needs.startswith("!")

    def needs_ok(needs, status, reason=""):
        """Apply the platform contract to one result."""
        if needs in ("-", ""):
            return status, ""
        has = must_run(needs)
        if has and status == "skip" and not reason.startswith(tuple(skip_allowed)):
            return "fail", f"skipped, but this platform must provide {needs}"
        if not has and status == "pass":
            return "fail", f"passed, but this platform lacks {needs}: it cannot have checked it"
        return status, ""

    def no_subtests(p, needs):
        """Judge a program that reported no subtest.

        One that exits 0 having printed nothing, or only an empty plan
        ("1..0", maybe "# SKIP why"), checked nothing: where the platform
        must run it, that is a failure, not a pass.  An empty plan skips the
        whole program, which is right where the platform lacks what it needs.
        """
        if p.status != "pass" or p.plan not in (None, 0):
            st, why = needs_ok(needs, p.status, p.reason)
            return st, why or p.reason
        if p.plan is None:
            return "fail", ("exited 0 but printed no KTAP (no plan, no results): "
                            "it checked nothing")
        directive = p.plan_directive or ""
        why = directive[4:].strip(" :") if directive.upper().startswith("SKIP") else ""
        if must_run(needs) and not (why and why.startswith(tuple(skip_allowed))):
            plan = "1..0" + (f" # {directive}" if directive else "")
            provides = "" if needs in ("-", "") else f", which needs {needs}"
            return "fail", (f"exited 0 but reported no tests ({plan}): this platform "
                            f"must run it{provides}")
        return "skip", why or "1..0: no tests"

    for prog, needs, _allowed, sub_needs in manifest:
        p = con.programs.get(prog)
        if p is None:
            out.append(Result(prog, "(program)", "fail",
                              "no result: the guest died or hung before it finished"))
            continue
        failed_sub = False
        for st, name, why in p.subtests:
            st2, why2 = needs_ok(sub_needs.get(name, needs), st, why)
            failed_sub |= st2 == "fail"
            out.append(Result(prog, name, st2, why2 or why))
        if p.plan is not None and len(p.subtests) != p.plan:
            out.append(Result(prog, "(plan)", "fail",
                              f"planned {p.plan} tests, reported {len(p.subtests)}"))
        if not p.subtests:
            st2, why2 = no_subtests(p, needs)
            out.append(Result(prog, "(program)", st2, why2))
        elif p.status == "fail" and not failed_sub:
            out.append(Result(prog, "(exit)", "fail", p.reason or "exited non-zero"))

    allowed = {m[0]: [re.compile(a) for a in m[2]] for m in manifest}
    allowed["boot"] = [re.compile(a) for a in boot_allowed]
    for inc in con.incidents:
        pats = allowed.get(inc.program, [])
        if any(p.search(inc.text()) for p in pats):
            continue
        # After the done marker, the last test has ended: what the kernel
        # logs then (process teardown, deferred work) is the boot's.
        where = "(kernel log after done)" if inc.late else "(kernel log)"
        out.append(Result(inc.program, where, "fail", inc.report()))

    if con.boots > 1:
        out.append(Result("boot", "(one boot)", "fail",
                          f"the console shows {con.boots} boots ('Linux version'): "
                          "the machine reset (a triple fault?) and booted again"))
    if not con.done:
        out.append(Result("guest", "(finished)", "fail",
                          "the guest never said it was done (panic, hang or timeout)"))
    return out


def load_manifest(path):
    """Read guest/tests.

    'program needs [allowed|allowed...]' lists a program;
    'program:subtest needs' overrides what one of its subtests needs.
    """
    manifest, order = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            prog = parts[0]
            needs = parts[1] if len(parts) > 1 else "-"
            if ":" in prog:
                prog, sub = prog.split(":", 1)
                manifest[prog][3][sub] = needs
                continue
            allowed = parts[2].split("|") if len(parts) > 2 else []
            manifest[prog] = (prog, needs, [a.strip() for a in allowed], {})
            order.append(prog)
    return [manifest[p] for p in order]
