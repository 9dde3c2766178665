#!/usr/bin/env python3
"""Validates JSON documents against ACI's ACRIS flight schemas (draft-03).

Usage: acris_validate.py SCHEMA_DIR < documents.jsonl

Each input line is {"name": ..., "schema": "ACRISFlight" | "ACRISFlightList",
"document": ...}. The schemas are read from SCHEMA_DIR (the reference copy in
../shared/standards/acris/model), their relative "$ref"s resolved to the
sibling files, and every document checked with jsonschema's Draft3Validator,
formats ("date-time") included. Prints one line per invalid document and
exits 1 when any is invalid, 2 when the validator cannot run as asked (so a
missing format checker never passes silently), 0 otherwise.
"""
import json
import pathlib
import sys

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT3


def main() -> int:
    schema_dir = pathlib.Path(sys.argv[1]).resolve()
    checker = jsonschema.Draft3Validator.FORMAT_CHECKER
    if "date-time" not in checker.checkers:
        print("date-time is not checked: install rfc3339-validator (scripts/services.sh)")
        return 2
    schemas = {}
    registry = Registry()
    for path in sorted(schema_dir.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        # Draft-03 names a schema's base URI "id": relative "$ref"s resolve
        # against the file's own URI, i.e. to its siblings.
        schema["id"] = path.as_uri()
        schemas[path.name.removesuffix(".schema.json")] = schema
        registry = registry.with_resource(
            path.as_uri(), Resource.from_contents(schema, default_specification=DRAFT3)
        )
    for wanted in ("ACRISFlight", "ACRISFlightList"):
        if wanted not in schemas:
            print(f"{wanted}.schema.json is not in {schema_dir}")
            return 2
    checked = invalid = 0
    for line in sys.stdin:
        if not line.strip():
            continue
        item = json.loads(line)
        schema = schemas[item["schema"]]
        validator = jsonschema.Draft3Validator(
            schema, registry=registry, format_checker=checker
        )
        errors = sorted(validator.iter_errors(item["document"]), key=lambda e: list(e.path))
        checked += 1
        if errors:
            invalid += 1
            for e in errors[:5]:
                where = "/".join(str(p) for p in e.absolute_path)
                print(f"INVALID {item['name']} ({item['schema']}) at /{where}: {e.message}")
    print(f"checked {checked} documents, {invalid} invalid")
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main())
