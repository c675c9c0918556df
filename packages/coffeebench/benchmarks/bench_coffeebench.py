"""Side by side: our episode runner vs the same scripted economy scheduled with mesa (the ABM peer).

Both sides play the same rules (:class:`paperworks.coffeebench.Economy`) with the same scripted
agents (reference farmers and retailers, heuristic roasters) and seeds: ours through
:class:`paperworks.coffeebench.Episode`'s round-robin schedule, the peer as a ``mesa.Model`` whose
``mesa.Agent`` firms each play one turn per activation, ``model.step()`` being one business day of
every copy. So the ratio is the scheduling framework's cost, not a different economy; the quality
table checks that both give the same net income to the cent. Sizes: 1, 2 and 4 independent copies
of the market (seeds 0..k-1), 30 simulated days each; reported as simulated days/s and tool calls/s.

    uv run python packages/coffeebench/benchmarks/bench_coffeebench.py [--quick]

``--quick``: 1 copy only, 3 rounds, results to a temporary folder.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from paperworks.coffeebench import EconomyConfig, Episode, reference_agents
from paperworks.coffeebench.config import FIRMS
from paperworks.core.bench import compare, write_results

DAYS = 30
CFG = EconomyConfig(days=DAYS)

try:
    import mesa
except ImportError:  # the 'peer' extra is missing
    mesa = None


def ours(copies: int) -> list[dict[str, float]]:
    out = []
    for s in range(copies):
        ep = Episode(CFG, s, reference_agents())
        r = ep.play()
        out.append(
            {f: r.metrics[f]["net_income"] for f in FIRMS}
            | {"calls": sum(r.metrics[f]["tool_calls"] for f in FIRMS)}
        )
    return out


if mesa is not None:

    class FirmAgent(mesa.Agent):
        """One firm of one market copy; ``step`` plays one turn."""

        def __init__(self, model: mesa.Model, episode: Episode, firm_id: str, policy) -> None:
            super().__init__(model)
            self.episode, self.firm_id, self.policy = episode, firm_id, policy

        def step(self) -> None:
            ep = self.episode
            ep.apply(self.firm_id, self.policy.act(ep.observation(self.firm_id)))

    class CoffeeModel(mesa.Model):
        """``copies`` markets; one ``step`` is one business day of each."""

        def __init__(self, copies: int) -> None:
            super().__init__(seed=0)
            self.episodes = []
            for s in range(copies):
                agents = reference_agents()
                ep = Episode(CFG, s, agents)
                self.episodes.append(ep)
                for f in FIRMS:
                    FirmAgent(self, ep, f, agents[f])

        def step(self) -> None:
            for ep in self.episodes:
                day = ep.economy.day
                by_firm = {a.firm_id: a for a in self.agents if a.episode is ep}
                while (fid := ep.next_actor()) is not None and ep.economy.day == day:
                    by_firm[fid].step()

    def peer(copies: int) -> list[dict[str, float]]:
        m = CoffeeModel(copies)
        while not all(ep.done for ep in m.episodes):
            m.step()
        out = []
        for ep in m.episodes:
            r = ep.result()
            out.append(
                {f: r.metrics[f]["net_income"] for f in FIRMS}
                | {"calls": sum(r.metrics[f]["tool_calls"] for f in FIRMS)}
            )
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = (1,) if args.quick else (1, 2, 4)
    sides = {"ours (Episode)": ours}
    if mesa is not None:
        sides["mesa 3 Model/Agent"] = peer
    res = compare(
        sides,
        make_input=lambda k: k,
        sizes=sizes,
        ours="ours (Episode)",
        repeats=3 if args.quick else 7,
        warmup=1,
        number=1,
        size_label="market copies",
        name=f"coffeebench: {DAYS} simulated days of the scripted economy",
        note="the same rules and agents on both sides; the peer schedules them with mesa",
    )
    rows = [
        "| market copies | simulated days/s (ours) | tool calls/s (ours) | simulated days/s (mesa) "
        "| net incomes agree |",
        "| --- | --- | --- | --- | --- |",
    ]
    for k in sizes:
        a = ours(k)
        calls = sum(x["calls"] for x in a)
        t_ours = res.row(k).side("ours (Episode)").median_s
        if mesa is not None:
            b = peer(k)
            agree = all(abs(x[f] - y[f]) < 0.005 for x, y in zip(a, b) for f in FIRMS)
            t_peer = res.row(k).side("mesa 3 Model/Agent").median_s
            peer_rate = f"{k * DAYS / t_peer:.0f}"
        else:
            agree, peer_rate = "peer missing", "–"
        rows.append(f"| {k} | {k * DAYS / t_ours:.0f} | {calls / t_ours:.0f} | {peer_rate} | {agree} |")
    folder = Path(tempfile.mkdtemp()) if args.quick else Path(__file__).parent
    write_results(
        res, folder, title="coffeebench benchmarks", tables={"Throughput and agreement": "\n".join(rows)}
    )
    print(res.to_markdown())
    print("\n".join(rows))
    print(f"results in {folder}")


if __name__ == "__main__":
    main()
