"""Writes the embedded sample fleet, src/lagassign/data/fleet/, deterministically.

    .venv/bin/python scripts/make-sample-fleet.py [--check]

* ``generated.parquet``: 300 groups from lagassign.samples (60 of each family: skewed backlogs,
  topics of very different volume, hot partitions, raw offsets with some never committed, mixed
  subscriptions), as a snapshot: offsets instead of bare lags (the same lag), the members'
  current assignment as Kafka's own assignors would have made it (range, cooperative-sticky or
  roundrobin), and per group, by a seeded draw: no commits at all (8%: a new group under
  ``latest``, or one re-reading its topics under ``earliest``), no members (4%), measured
  produce/consume rates (30%), racks (10%).
* ``seed002.jsonl``: seed 002's two ``kafka-consumer-groups --describe`` tables
  (src/lagassign/data/seed002-describe.txt) as snapshot rows.

``--check`` regenerates into a temporary folder and fails if the result differs from the
committed files (same pyarrow version assumed for the Parquet bytes; the rows are compared).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lagassign.formats.describe import load_describe
from lagassign.formats.snapshot_rows import SNAPSHOT_SCHEMA
from lagassign.lag_rules import group_lags
from lagassign.model import Group, TopicPartition
from lagassign.samples import FAMILIES, generate
from lagassign.strategies import create

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "lagassign" / "data"
OUT = DATA / "fleet"
PER_FAMILY = 60
MAX_PARTITIONS = 64
CURRENT_ASSIGNORS = (("range", 0.5), ("cooperative-sticky", 0.3), ("roundrobin", 0.2))
RACKS = ("az1", "az2", "az3")


def _pick(rng: random.Random, weighted: tuple[tuple[str, float], ...]) -> str:
    x = rng.random()
    for name, weight in weighted:
        if x < weight:
            return name
        x -= weight
    return weighted[-1][0]


def group_rows(family: str, seed: int) -> list[dict[str, Any]]:
    """The snapshot rows of one generated group."""
    rng = random.Random(f"fleet:{family}:{seed}")
    group: Group = generate(family, seed, MAX_PARTITIONS)
    gid = f"{family}-{seed:03d}"
    lags = group_lags(group)
    no_commits = rng.random() < 0.08
    empty = rng.random() < 0.04
    rated = rng.random() < 0.3
    racked = rng.random() < 0.1
    reset = group.auto_offset_reset
    if no_commits:
        reset = rng.choice(("latest", "earliest"))
    state_reset = reset if (reset != "latest" or rng.random() < 0.5) else None

    owners: dict[TopicPartition, str] = {}
    if not empty and group.members:
        assignor = _pick(rng, CURRENT_ASSIGNORS)
        owners = create(assignor).assign(group).owners()
    hosts = {
        m.id: f"/10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
        for m in group.members
    }
    member_racks = {m.id: RACKS[i % len(RACKS)] for i, m in enumerate(group.members)}
    every = set(group.topics)
    capacity = rng.uniform(0.8, 3.0)

    rows = []
    for p in group.partitions():
        lag = lags[p.tp]
        if p.offsets is not None:
            begin, end, committed = p.offsets.begin, p.offsets.end, p.offsets.committed
        else:
            begin = rng.randint(0, 5_000_000)
            committed = begin + rng.randint(0, 50_000_000)
            end = committed + lag
        if no_commits:
            committed = None
            if reset == "earliest" and p.offsets is None:
                begin = end - lag
        member = owners.get(p.tp)
        rate_in = round(rng.expovariate(1 / 20), 1) if rated else None
        rows.append(
            {
                "group": gid,
                "topic": p.topic,
                "partition": p.partition,
                "begin": begin,
                "end": end,
                "committed": committed,
                "member_id": member,
                "client_id": member.rsplit("-", 1)[0] if member else None,
                "host": hosts[member] if member else None,
                "rack": member_racks[member] if member and racked else None,
                "auto_offset_reset": state_reset,
                "subscribed": (
                    sorted(group.member(member).topics)
                    if member and group.member(member).topics != every
                    else None
                ),
                "replica_racks": sorted(rng.sample(RACKS, 2)) if racked else None,
                "rate_in": rate_in,
                "rate_out": round(rate_in * capacity, 1) if rate_in is not None else None,
            }
        )
    return rows


def seed002_rows() -> list[dict[str, Any]]:
    """Seed 002's describe tables as snapshot rows: the dump's offsets (log start 0, as the
    describe reader takes it) and owners, cross-checked against lagassign's describe reader."""
    path = DATA / "seed002-describe.txt"
    expected = {(g.id, tp): lag for g in load_describe(path) for tp, lag in group_lags(g).items()}
    rows = []
    header: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = line.split()
        if not cells:
            continue
        if cells[0] == "GROUP":
            header = cells
            continue
        assert header is not None
        row = dict(zip(header, cells, strict=True))
        client, _, host = row["OWNER"].partition("_")
        committed = None if row["CURRENT-OFFSET"] == "-" else int(row["CURRENT-OFFSET"])
        end = int(row["LOG-END-OFFSET"])
        tp = TopicPartition(row["TOPIC"], int(row["PARTITION"]))
        assert end - (committed or 0) == expected[(row["GROUP"], tp)], row
        rows.append(
            {
                "group": row["GROUP"],
                "topic": tp.topic,
                "partition": tp.partition,
                "begin": 0,
                "end": end,
                "committed": committed,
                "member_id": row["OWNER"],
                "client_id": client,
                "host": host,
            }
        )
    return rows


def write(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        r for family in FAMILIES for seed in range(PER_FAMILY) for r in group_rows(family, seed)
    ]
    table = pa.Table.from_pylist(rows, schema=SNAPSHOT_SCHEMA)
    pq.write_table(table, folder / "generated.parquet", compression="zstd", row_group_size=50_000)
    with open(folder / "seed002.jsonl", "w", encoding="utf-8") as f:
        for row in seed002_rows():
            f.write(json.dumps(row) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    args = parser.parse_args()
    if not args.check:
        write(OUT)
        size = sum(f.stat().st_size for f in OUT.iterdir())
        print(f"wrote {OUT} ({size / 1024:.0f} KiB)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp))
        same = (
            pq.read_table(Path(tmp) / "generated.parquet").equals(
                pq.read_table(OUT / "generated.parquet")
            )
            and (Path(tmp) / "seed002.jsonl").read_text() == (OUT / "seed002.jsonl").read_text()
        )
    print("the sample fleet is up to date" if same else "the sample fleet differs: regenerate it")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
