"""README.md's figures."""

from __future__ import annotations

from check_docs.claims import common
from check_docs.model import Claim, Registry, Run, Value as V

F = "README.md"


def declare(r: Registry) -> None:
    common.declare_runs(r)
    r.run(
        Run("mqsim-reference-cli", ["run", "bench/mqsim-reference.toml", "--json", "-q"], memory=True, cost=5),
        Run("mqsim-reference-cli-integrity", ["run", "bench/mqsim-reference.toml", "--json", "-q"], memory=True,
            env={"NANDLAB_INTEGRITY": "1"}, cost=6),
        Run("serve-compare-sim", ["fio", "bench/serve-compare.fio", "--device", "snia-mlc", "--capacity", "1GiB",
                                  "--json", "-q"], cost=2),
        Run("bench-serve", python="recipes:bench_serve", cost=60, ci=False, measured=True),
        Run("served-snapshot", python="recipes:served_snapshot", cost=8, ci=False, measured=True),
        Run("retention-vt-1500", ["test", "retention", "--device", "examples/tlc-3d-vt.toml", "--cycles", "1500",
                                  "--hours", "500", "--temperature", "52", "--capacity", "2GiB", "--json", "-q"], cost=2),
        Run("retention-vt-1800", ["test", "retention", "--device", "examples/tlc-3d-vt.toml", "--cycles", "1800",
                                  "--hours", "500", "--temperature", "52", "--capacity", "2GiB", "--json", "-q"], cost=2),
        *(Run(f"retention-3d-{c}", ["test", "retention", "--device", "tlc-3d-errors", "--cycles", str(c), "--hours",
                                    "500", "--temperature", "52", "--capacity", "2GiB", "--json", "-q"], cost=2)
          for c in (1500, 1750, 1800)),
        Run("energy-anchor", python="recipes:energy_anchor", cost=3),
        Run("early-switch-blocks", python="recipes:early_switch_blocks", cost=1),
        Run("readme-power-cuts", python="recipes:readme_power_cut_snippet", cost=3),
        Run("waf-models", python="recipes:waf_models", cost=120, ci=False),
        Run("invariants", python="recipes:invariants_cuts", cost=150, ci=False, measured=True),
    )

    def passes(cycles: int, verdict: bool):
        """The cycles, if the retention test's verdict at them is ``verdict`` (else what it was)."""
        return lambda d: cycles if d["pass"] is verdict else f"{'passes' if d['pass'] else 'fails'} at {cycles}"

    random_write = "phases.random-write"
    r.check(
        Claim(F, "takes nandlab's engine about half a second (`nandlab run bench/mqsim-reference.toml`: "
                 "1 s and {mib} MiB at its peak", {"mib": V("mqsim-reference-cli", "peak_rss_mib", ",.0f", tol=0.1)}),
        Claim(F, "4 KiB random reads at QD 1: {rt_iops} IOPS / {rt_us} µs against {sim_iops} / {sim_us} simulated "
                 "(raw: {raw_iops} / {raw_us}); at QD 16: {rt16_iops} / {rt16_us} µs against {sim16_iops} / "
                 "{sim16_us}. `--timing fast`",
              {"rt_iops": V("bench-serve", "fio (realtime, auto) qd1.iops", ",.0f", tol=0.15),
               "rt_us": V("bench-serve", "fio (realtime, auto) qd1.mean_us", ".1f", tol=0.15),
               "raw_iops": V("bench-serve", "fio (realtime, 0) qd1.iops", ",.0f", tol=0.15),
               "raw_us": V("bench-serve", "fio (realtime, 0) qd1.mean_us", ".1f", tol=0.15),
               "rt16_iops": V("bench-serve", "fio (realtime, auto) qd16.iops", ",.0f", tol=0.15),
               "rt16_us": V("bench-serve", "fio (realtime, auto) qd16.mean_us", ".1f", tol=0.15),
               "sim_iops": V("serve-compare-sim", "jobs.qd1.read.iops", ",.0f"),
               "sim_us": V("serve-compare-sim", "jobs.qd1.read.lat_ns.mean", get=lambda ns: ns / 1e3, fmt=".1f"),
               "sim16_iops": V("serve-compare-sim", "jobs.qd16.read.iops", ",.0f"),
               "sim16_us": V("serve-compare-sim", "jobs.qd16.read.lat_ns.mean", get=lambda ns: ns / 1e3, fmt=".1f")}),
        Claim(F, "the state: {mb} MB for 3 MiB written on a 1 GiB drive",
              {"mb": V("served-snapshot", "snapshot_bytes", get=lambda b: b / 1e6, fmt=".1f", tol=0.05)}),
        Claim(F, "it too passes `nandlab test retention` at {ok} cycles and fails at {bad}.",
              {"ok": V("retention-vt-1500", get=passes(1500, True), fmt=",.0f"),
               "bad": V("retention-vt-1800", get=passes(1800, False), fmt=",.0f")}),
        Claim(F, "rated 1,500 cycles, where it passes `nandlab test retention` (500 h at 52 °C, `--capacity "
                 "2GiB`) with margin (UBER {uber} expected over the endurance spread, {own} on seed 1's own "
                 "blocks); it fails at {bad} cycles ({bad_uber}) and {worse}.",
              {"uber": V("retention-3d-1500", "uber_expected", ".2e"),
               "own": V("retention-3d-1500", "uber", ".2e"),
               "bad": V("retention-3d-1750", get=passes(1750, False), fmt=",.0f"),
               "bad_uber": V("retention-3d-1750", "uber_expected", ".2e"),
               "worse": V("retention-3d-1800", get=passes(1800, False), fmt=",.0f")}),
        Claim(F, "preset in random-write steady state gives {kiops} K-IOPS at {watts} W, {per_watt} K-IOPS/W.",
              {"kiops": V("energy-anchor", "phases.writes.iops", get=lambda x: x / 1e3, fmt=".1f"),
               "watts": V("energy-anchor", "phases.writes.average_power_w", ".1f"),
               "per_watt": V("energy-anchor", "phases.writes.iops_per_watt", get=lambda x: x / 1e3, fmt=".1f")}),
        Claim(F, "on the default experiment it costs {cost} %: WAF {waf} → {waf_stop}, {iops} → {iops_stop} IOPS,",
              {"cost": V(("default", "default-gc-until-stop"), fmt=".0f",
                         get=lambda a, b: 100 * (1 - dig_iops(b) / dig_iops(a))),
               "waf": V("default", f"{random_write}.waf", ".2f"),
               "waf_stop": V("default-gc-until-stop", f"{random_write}.waf", ".2f"),
               "iops": V("default", f"{random_write}.iops", ",.0f"),
               "iops_stop": V("default-gc-until-stop", f"{random_write}.iops", ",.0f")}),
        Claim(F, "− `gc_start`, {tlc30} TLC or {mlc30} MLC blocks of 128 at 30 % reserve, {tlc10} and {mlc10} at",
              {k: V("early-switch-blocks", k.replace("30", "-30").replace("10", "-10")) for k in
               ("tlc30", "mlc30", "tlc10", "mlc10")}),
        Claim(F, "a 512 GiB drive: {plain} → {checked} MiB at the peak)",
              {"plain": V("mqsim-reference-cli", "peak_rss_mib", ",.0f", tol=0.1),
               "checked": V("mqsim-reference-cli-integrity", "peak_rss_mib", ",.0f", tol=0.1)}),
        Claim(F, 'power_loss_every = "50ms"    # {cuts} cuts; {lost} acknowledged units lost, all to paired pages',
              {"cuts": V("readme-power-cuts", "power_loss.cuts"),
               "lost": V("readme-power-cuts", "power_loss", fmt=",.0f",
                         get=lambda p: p["acknowledged_lost_units"]
                         if p["lost_by_reason"]["paired_page"] == p["acknowledged_lost_units"] else -1)}),
        Claim(F, "greedy, random victims) within {error} % from 7 % to 50 % over-provisioning",
              {"error": V("waf-models", "max_error_percent", bound="at most")}),
        # proptest draws new sequences each run: 14,304 and 15,754 cuts in two runs of the same code.
        Claim(F, "exactly the losses the test's own dictionary counts — about {cuts} cuts per CI run",
              {"cuts": V("invariants", "cuts", ",.0f", tol=0.15)}),
        Claim(F, "`examples/suspend.toml`'s untimed ageing moves {millions} million requests in none",
              {"millions": V("suspend", "phases.age.host_requests", get=lambda n: n / 1e6, fmt=".1f")}),
    )


def dig_iops(document) -> float:
    from check_docs.model import dig

    return dig(document, "phases.random-write.iops")
