"""A small TypeBox-like builder of JSON Schemas (stdlib only): ``Type.Object({...})``."""

_OPTIONAL = "__resolve_desk_optional__"


class _Type:
    @staticmethod
    def Object(properties, **options):
        props = {}
        required = []
        for key, schema in properties.items():
            schema = dict(schema)
            if not schema.pop(_OPTIONAL, False):
                required.append(key)
            props[key] = schema
        out = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        out.update(_options(options))
        return out

    @staticmethod
    def Array(items, **options):
        return {"type": "array", "items": items, **_options(options)}

    @staticmethod
    def String(**options):
        return {"type": "string", **_options(options)}

    @staticmethod
    def Number(**options):
        return {"type": "number", **_options(options)}

    @staticmethod
    def Integer(**options):
        return {"type": "integer", **_options(options)}

    @staticmethod
    def Boolean(**options):
        return {"type": "boolean", **_options(options)}

    @staticmethod
    def Literal(value, **options):
        return {"const": value, **_options(options)}

    @staticmethod
    def Union(schemas, **options):
        return {"anyOf": list(schemas), **_options(options)}

    @staticmethod
    def Optional(schema):
        return {**schema, _OPTIONAL: True}


def _options(options):
    # Python keywords in snake_case become JSON Schema's camelCase (min_length → minLength).
    out = {}
    for key, value in options.items():
        parts = key.split("_")
        out[parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])] = value
    return out


Type = _Type()
