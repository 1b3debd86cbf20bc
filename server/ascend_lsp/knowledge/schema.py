"""Checks a table against the JSON Schema subset that mappings/schema/*.json use.

The shipped tables are checked with the full `jsonschema` in the tests; a project's own
`extra-mappings` tables are checked here, when they are loaded, without it: jsonschema pulls a
compiled dependency (rpds-py) that the editor's pure-Python bundle cannot carry. A keyword this
module does not know is an error, so a schema that outgrows it fails its test, not silently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

TYPES: dict[str, type | tuple[type, ...]] = {
    "object": dict, "array": list, "string": str, "boolean": bool, "number": (int, float), "integer": int}
ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description"}


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]  # where in the instance: ("api", 2, "fix")
    keyword: str  # the schema keyword that failed: "required", "enum", ...
    message: str


def first_error(instance: Any, schema: dict, root: dict | None = None,
                path: tuple[str | int, ...] = ()) -> SchemaError | None:
    """The first place where `instance` breaks `schema`, or None."""
    root = root if root is not None else schema
    for keyword, value in schema.items():
        if keyword in ANNOTATIONS:
            continue
        check = _CHECKS.get(keyword)
        if check is None:
            raise ValueError(f"schema keyword {keyword!r} is not supported by knowledge/schema.py")
        error = check(instance, value, schema, root, path)
        if error is not None:
            return error
    return None


def _ref(instance, value, _schema, root, path):
    if not value.startswith("#/"):
        raise ValueError(f"only local $ref is supported, not {value!r}")
    target = root
    for part in value[2:].split("/"):
        target = target[part]
    return first_error(instance, target, root, path)


def _type(instance, value, _schema, _root, path):
    expected = TYPES[value]
    bad_bool = isinstance(instance, bool) and value in ("number", "integer")
    if not isinstance(instance, expected) or bad_bool:
        return SchemaError(path, "type", f"{instance!r} is not of type {value!r}")
    return None


def _properties(instance, value, _schema, root, path):
    if not isinstance(instance, dict):
        return None
    for key, sub in value.items():
        if key in instance:
            error = first_error(instance[key], sub, root, (*path, key))
            if error is not None:
                return error
    return None


def _additional(instance, value, schema, _root, path):
    if value is False and isinstance(instance, dict):
        for key in instance:
            if key not in schema.get("properties", {}):
                return SchemaError((*path, key), "additionalProperties", "unknown key")
    return None


def _required(instance, value, _schema, _root, path):
    if isinstance(instance, dict):
        for key in value:
            if key not in instance:
                return SchemaError((*path, key), "required", "missing (it is required)")
    return None


def _dependent(instance, value, _schema, _root, path):
    if isinstance(instance, dict):
        for key, needs in value.items():
            for need in needs if key in instance else ():
                if need not in instance:
                    return SchemaError((*path, need), "dependentRequired", f"missing (`{key}` needs it)")
    return None


def _items(instance, value, _schema, root, path):
    if isinstance(instance, list):
        for index, item in enumerate(instance):
            error = first_error(item, value, root, (*path, index))
            if error is not None:
                return error
    return None


def _enum(instance, value, _schema, _root, path):
    return None if instance in value else SchemaError(path, "enum", f"{instance!r} is not one of {value!r}")


def _pattern(instance, value, _schema, _root, path):
    if isinstance(instance, str) and not re.search(value, instance):
        return SchemaError(path, "pattern", f"{instance!r} does not match {value!r}")
    return None


def _min_items(instance, value, _schema, _root, path):
    if isinstance(instance, list) and len(instance) < value:
        return SchemaError(path, "minItems", f"needs at least {value} item(s)")
    return None


def _min_length(instance, value, _schema, _root, path):
    if isinstance(instance, str) and len(instance) < value:
        return SchemaError(path, "minLength", "must not be empty" if value == 1 else f"shorter than {value}")
    return None


def _minimum(instance, value, _schema, _root, path):
    if isinstance(instance, (int, float)) and not isinstance(instance, bool) and instance < value:
        return SchemaError(path, "minimum", f"{instance!r} is less than {value!r}")
    return None


def _unique(instance: object, value: object, _schema: dict, _root: dict,
            path: tuple[str | int, ...]) -> SchemaError | None:
    if value and isinstance(instance, list):
        seen: list = []
        for item in instance:
            if item in seen:
                return SchemaError(path, "uniqueItems", f"{item!r} appears twice")
            seen.append(item)
    return None


_CHECKS = {
    "$ref": _ref, "type": _type, "properties": _properties, "additionalProperties": _additional,
    "required": _required, "dependentRequired": _dependent, "items": _items, "enum": _enum,
    "pattern": _pattern, "minItems": _min_items, "minLength": _min_length, "uniqueItems": _unique,
    "minimum": _minimum,
}
