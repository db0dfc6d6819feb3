#!/usr/bin/env python3
"""Validations per second: ``mcp_proto.schema`` against fastjsonschema and jsonschema.

    python bench/bench_schema.py [--seconds 2.0] [--repeat 3] [--json]

One typical tool ``outputSchema`` (search results: nested objects, an array, ``$ref``,
``pattern``, ``enum``, numeric and length bounds, ``additionalProperties: false``) and
two valid results: about 2 KB and about 1 MB of JSON. Every library compiles the schema
once, then validates the same parsed instance repeatedly for at least ``--seconds``
(``--repeat`` times; the median is kept). The table gives the time to compile the schema
once, validations per second and the mean time of one validation.

The schema is written so all three libraries read it the same way (draft-07 keywords:
fastjsonschema implements drafts 04-07 only). ``jsonschema-rs (direct)`` is the engine
under ``mcp_proto.schema`` called without the adapter, to show the adapter's cost.
fastjsonschema and jsonschema are only benchmark baselines (extra ``bench``), never
runtime dependencies.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["query", "total", "results"],
    "additionalProperties": False,
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 500},
        "total": {"type": "integer", "minimum": 0},
        "next_cursor": {"type": ["string", "null"]},
        "results": {"type": "array", "items": {"$ref": "#/definitions/result"}},
    },
    "definitions": {
        "result": {
            "type": "object",
            "required": ["id", "title", "url", "score"],
            "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": "^[a-z0-9]{8}-[a-z0-9]{4}$"},
                "title": {"type": "string", "minLength": 1, "maxLength": 300},
                "url": {"type": "string", "pattern": "^https?://[^\\s]+$"},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "kind": {"enum": ["page", "pdf", "image", "video"]},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                "author": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "email": {"type": "string", "maxLength": 254},
                    },
                    "required": ["name"],
                },
            },
        }
    },
}


def _result(i: int) -> dict[str, Any]:
    return {
        "id": f"{i:08d}-{i % 10000:04d}",
        "title": f"Result number {i} about validating structured tool output",
        "url": f"https://example.com/articles/{i}/validating-json-schema",
        "score": (i % 100) / 100,
        "kind": ("page", "pdf", "image", "video")[i % 4],
        "tags": ["json", "schema", f"tag{i % 7}"],
        "author": {"name": f"Author {i % 13}", "email": f"author{i % 13}@example.com"},
    }


def instance(target_bytes: int) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    doc: dict[str, Any] = {"query": "json schema", "total": 0, "results": results}
    while len(json.dumps(doc)) < target_bytes:
        results.append(_result(len(results)))
        doc["total"] = len(results)
    return doc


def _ours() -> Callable[[], Callable[[Any], bool]]:
    from mcp_proto import schema

    return lambda: schema.compile(SCHEMA).is_valid


def _direct() -> Callable[[], Callable[[Any], bool]]:
    import jsonschema_rs

    def build() -> Callable[[Any], bool]:
        validator = jsonschema_rs.validator_for(SCHEMA, offline=True, validate_formats=False)
        return validator.is_valid  # type: ignore[no-any-return]

    return build


def _fastjsonschema() -> Callable[[], Callable[[Any], bool]]:
    import fastjsonschema

    def build() -> Callable[[Any], bool]:
        validate = fastjsonschema.compile(SCHEMA)

        def is_valid(data: Any) -> bool:
            try:
                validate(data)
            except fastjsonschema.JsonSchemaException:
                return False
            return True

        return is_valid

    return build


def _jsonschema() -> Callable[[], Callable[[Any], bool]]:
    import jsonschema

    return lambda: jsonschema.Draft7Validator(SCHEMA).is_valid


# name -> (imports the library) -> (compiles the schema) -> is_valid
LIBRARIES: list[tuple[str, Callable[[], Callable[[], Callable[[Any], bool]]]]] = [
    ("mcp_proto.schema", _ours),
    ("jsonschema-rs (direct)", _direct),
    ("fastjsonschema", _fastjsonschema),
    ("jsonschema", _jsonschema),
]


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "?"


def measure(is_valid: Callable[[Any], bool], data: Any, seconds: float) -> tuple[float, int]:
    """Validations per second over at least ``seconds`` (and 3 runs), and the run count."""
    if not is_valid(data):
        raise SystemExit("benchmark instance rejected: the libraries disagree")
    for _ in range(3):  # warm-up
        is_valid(data)
    count = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds or count < 3:
        is_valid(data)
        count += 1
        elapsed = time.perf_counter() - start
    return count / elapsed, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="measurements; the median is kept")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)

    sizes = {"2 KB": instance(2 * 1024), "1 MB": instance(1024 * 1024)}
    rows: list[dict[str, Any]] = []
    for name, library in LIBRARIES:
        builder = library()  # the import is not timed
        start = time.perf_counter()
        is_valid = builder()  # compiling the schema is (once: later calls hit our cache)
        build = time.perf_counter() - start
        row: dict[str, Any] = {"library": name, "build_ms": build * 1000}
        for label, data in sizes.items():
            rates = sorted(measure(is_valid, data, args.seconds)[0] for _ in range(args.repeat))
            rate = rates[len(rates) // 2]
            row[label] = {"per_second": rate, "mean_ms": 1000 / rate, "measurements": rates}
        rows.append(row)

    if args.json:
        print(
            json.dumps(
                {
                    "python": platform.python_version(),
                    "machine": platform.machine(),
                    "versions": {
                        "jsonschema-rs": _version("jsonschema-rs"),
                        "fastjsonschema": _version("fastjsonschema"),
                        "jsonschema": _version("jsonschema"),
                    },
                    "bytes": {k: len(json.dumps(v)) for k, v in sizes.items()},
                    "rows": rows,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"Python {platform.python_version()} on {platform.machine()}; jsonschema-rs"
        f" {_version('jsonschema-rs')}, fastjsonschema {_version('fastjsonschema')},"
        f" jsonschema {_version('jsonschema')}"
    )
    print(
        "instances: " + ", ".join(f"{k} = {len(json.dumps(v)):,} bytes" for k, v in sizes.items())
    )
    header = f"{'library':<24} {'build':>9} {'2 KB /s':>12} {'2 KB each':>11}"
    header += f" {'1 MB /s':>10} {'1 MB each':>11}"
    print(header)
    print("-" * len(header))
    for row in rows:
        small, large = row["2 KB"], row["1 MB"]
        print(
            f"{row['library']:<24} {row['build_ms']:>7.2f}ms {small['per_second']:>12,.0f}"
            f" {small['mean_ms'] * 1000:>9.1f}us {large['per_second']:>10,.1f}"
            f" {large['mean_ms']:>9.2f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
