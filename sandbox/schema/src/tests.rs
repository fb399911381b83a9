//! Table tests of the whole pipeline against hand-written schemas.

use super::*;
use serde_json::{Value, json};

/// Compiles without the structural rules, so that every keyword's semantics can be tested.
fn compile(schema: Value) -> CompiledSchema {
    CompiledSchema::compile_unchecked(&schema).expect("schema compiles")
}

fn wrap_spec(spec_schema: Value) -> Value {
    json!({"type": "object", "properties": {"spec": spec_schema}})
}

fn messages(schema: &CompiledSchema, object: &Value, old: Option<&Value>) -> Vec<String> {
    schema
        .validate(object, old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn value_validation_messages() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "required": ["regionId"],
        "properties": {
            "regionId": {"type": "string"},
            "instanceType": {"type": "string", "pattern": "^ecs\\."},
            "size": {"type": "integer", "minimum": 1, "maximum": 9},
            "ratio": {"type": "number", "exclusiveMinimum": true, "minimum": 0, "exclusiveMaximum": true, "maximum": 1.5},
            "step": {"type": "integer", "multipleOf": 5},
            "policy": {"type": "string", "enum": ["Delete", "Orphan"]},
            "level": {"type": "integer", "enum": [1, 2]},
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
            "labels": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "created": {"type": "string", "format": "date-time"},
            "flag": {"type": "boolean"},
            "opt": {"type": "string", "nullable": true}
        }
    })));
    let base = json!({"regionId": "cn-hangzhou"});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"regionId": "cn-hangzhou", "opt": null}), vec![]),
        (json!({}), vec!["spec.regionId: Required value"]),
        (
            json!({"instanceType": "m5.large"}),
            vec![
                "spec.instanceType: Invalid value: \"m5.large\": spec.instanceType in body should match '^ecs\\.'",
            ],
        ),
        (
            json!({"size": 12}),
            vec![
                "spec.size: Invalid value: 12: spec.size in body should be less than or equal to 9",
            ],
        ),
        (
            json!({"size": 0}),
            vec![
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ],
        ),
        (
            json!({"size": "3"}),
            vec![
                "spec.size: Invalid value: \"string\": spec.size in body must be of type integer: \"string\"",
            ],
        ),
        (
            json!({"size": 2.5}),
            vec![
                "spec.size: Invalid value: \"number\": spec.size in body must be of type integer: \"number\"",
            ],
        ),
        (json!({"size": 3.0}), vec![]),
        (
            json!({"ratio": 1.5}),
            vec!["spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"],
        ),
        (
            json!({"ratio": 0}),
            vec!["spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"],
        ),
        (
            json!({"step": 7}),
            vec!["spec.step: Invalid value: 7: spec.step in body should be a multiple of 5"],
        ),
        (
            json!({"policy": "Keep"}),
            vec![
                "spec.policy: Unsupported value: \"Keep\": supported values: \"Delete\", \"Orphan\"",
            ],
        ),
        (
            json!({"level": 3}),
            vec!["spec.level: Unsupported value: 3: supported values: \"1\", \"2\""],
        ),
        (
            json!({"name": "a"}),
            vec![
                "spec.name: Invalid value: \"a\": spec.name in body should be at least 2 chars long",
            ],
        ),
        (
            json!({"name": "abcdef"}),
            vec!["spec.name: Too long: may not be more than 5 bytes"],
        ),
        (
            json!({"tags": []}),
            vec!["spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"],
        ),
        (
            json!({"tags": ["a", "b", "c"]}),
            vec!["spec.tags: Too many: 3: must have at most 2 items"],
        ),
        (
            json!({"tags": ["a", 1]}),
            vec![
                "spec.tags[1]: Invalid value: \"integer\": spec.tags[1] in body must be of type string: \"integer\"",
            ],
        ),
        (
            json!({"labels": {"a": "x", "b": "y"}}),
            vec!["spec.labels: Too many: 2: must have at most 1 items"],
        ),
        (
            json!({"labels": {"a": 1}}),
            vec![
                "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"",
            ],
        ),
        (
            json!({"created": "yesterday"}),
            vec![
                "spec.created: Invalid value: \"yesterday\": spec.created in body must be of type date-time: \"yesterday\"",
            ],
        ),
        (
            json!({"flag": "true"}),
            vec![
                "spec.flag: Invalid value: \"string\": spec.flag in body must be of type boolean: \"string\"",
            ],
        ),
        (
            json!({"policy": null}),
            vec![
                "spec.policy: Invalid value: \"null\": spec.policy in body must be of type string: \"null\"",
            ],
        ),
    ];
    for (spec, want) in cases {
        let mut spec_obj = base.clone();
        if let (Some(target), Some(extra)) = (spec_obj.as_object_mut(), spec.as_object()) {
            if extra.is_empty() {
                target.clear();
            }
            for (k, v) in extra {
                target.insert(k.clone(), v.clone());
            }
        }
        let object = json!({"spec": spec_obj});
        assert_eq!(messages(&schema, &object, None), want, "spec {spec}");
    }
}

#[test]
fn composition_keywords() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "a": {"type": "string"}, "b": {"type": "string"},
            "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "notEmpty": {"type": "string", "not": {"enum": [""]}},
            "both": {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 3}]}
        },
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]
    })));
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"a": "x"}), vec![]),
        (json!({"a": "x", "port": 80}), vec![]),
        (json!({"a": "x", "port": "http"}), vec![]),
        (
            json!({"a": "x", "b": "y"}),
            vec![
                "<nil>: Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found 2 valid alternatives",
            ],
        ),
        (
            json!({}),
            vec![
                "<nil>: Invalid value: \"\": \"spec\" must validate one and only one schema (oneOf). Found none valid",
                "spec.a: Required value",
            ],
        ),
        (
            json!({"a": "x", "port": true}),
            vec![
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
            ],
        ),
        (
            json!({"a": "x", "notEmpty": ""}),
            vec![
                "<nil>: Invalid value: \"\": \"spec.notEmpty\" must not validate the schema (not)",
            ],
        ),
        (
            json!({"a": "x", "both": 5}),
            vec![
                "spec.both: Invalid value: 5: spec.both in body should be less than or equal to 3",
                "<nil>: Invalid value: \"\": \"spec.both\" must validate all the schemas (allOf)",
            ],
        ),
    ];
    for (spec, want) in cases {
        let object = json!({"spec": spec});
        assert_eq!(messages(&schema, &object, None), want, "spec {spec}");
    }
}

#[test]
fn list_types() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                "items": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}}
            },
            "named": {
                "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}
            }
        }
    })));
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"set": ["a", "b"], "named": [{"name": "a"}, {"name": "b"}]}),
            vec![],
        ),
        (
            json!({"set": ["a", "b", "a"]}),
            vec!["spec.set[2]: Duplicate value: \"a\""],
        ),
        (
            json!({"named": [{"name": "a"}, {"name": "a"}]}),
            vec!["spec.named[1]: Duplicate value: \"a\""],
        ),
        (
            json!({"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}, {"port": 80, "protocol": "TCP"}]}),
            vec![
                "spec.ports[2]: Duplicate value: map[string]interface {}{\"port\":80, \"protocol\":\"TCP\"}",
            ],
        ),
    ];
    for (spec, want) in cases {
        let object = json!({"spec": spec});
        assert_eq!(messages(&schema, &object, None), want, "spec {spec}");
    }
}

fn cel_schema() -> CompiledSchema {
    compile(json!({
        "type": "object",
        "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(self.min) || !has(self.max) || self.min <= self.max", "message": "min must not exceed max", "fieldPath": ".min"},
                {"rule": "!has(oldSelf.mode) || has(self.mode)", "message": "mode cannot be unset", "reason": "FieldValueForbidden"}
            ],
            "properties": {
                "regionId": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "regionId is immutable"}]},
                "min": {"type": "integer"},
                "max": {"type": "integer"},
                "mode": {"type": "string"},
                "name": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "self.matches('^[a-z]+$')"},
                    {"rule": "self.startsWith('web')", "messageExpression": "'name ' + self + ' must start with web'"}
                ]},
                "items": {"type": "array", "items": {"type": "integer"},
                    "x-kubernetes-validations": [{"rule": "self.all(x, x > 0) && size(self) <= 3", "message": "bad items"}]},
                "tags": {"type": "object", "additionalProperties": {"type": "string"},
                    "x-kubernetes-validations": [{"rule": "self.exists(k, k == 'owner') ? self.owner != '' : true", "message": "owner must not be empty"}]},
                "weird-name": {"type": "integer"},
                "needsWeird": {"type": "boolean", "x-kubernetes-validations": [{"rule": "self", "message": "must be true"}]},
                "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.0", "message": "ratio below one"}]},
                "missing": {"type": "object", "properties": {"x": {"type": "string"}},
                    "x-kubernetes-validations": [{"rule": "self.x == 'a'"}]},
                "named": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "string",
                        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "value is immutable"}]}}}}
            }
        }}
    }))
}

#[test]
fn cel_rules_on_create() {
    let schema = cel_schema();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"regionId": "a", "name": "webby", "items": [1, 2]}),
            vec![],
        ),
        (
            json!({"min": 5, "max": 1}),
            vec!["spec.min: Invalid value: \"object\": min must not exceed max"],
        ),
        (
            json!({"name": "Web"}),
            vec![
                "spec.name: Invalid value: \"string\": failed rule: self.matches('^[a-z]+$')",
                "spec.name: Invalid value: \"string\": name Web must start with web",
            ],
        ),
        (
            json!({"items": [1, 0]}),
            vec!["spec.items: Invalid value: \"array\": bad items"],
        ),
        (
            json!({"items": [1, 2, 3, 4]}),
            vec!["spec.items: Invalid value: \"array\": bad items"],
        ),
        (
            json!({"tags": {"owner": ""}}),
            vec!["spec.tags: Invalid value: \"object\": owner must not be empty"],
        ),
        (json!({"tags": {"team": "x"}}), vec![]),
        (
            json!({"needsWeird": false}),
            vec!["spec.needsWeird: Invalid value: \"boolean\": must be true"],
        ),
        (json!({"ratio": 0.5}), vec![]),
        (
            json!({"ratio": 2}),
            vec!["spec.ratio: Invalid value: \"number\": ratio below one"],
        ),
        (
            json!({"missing": {}}),
            vec![
                "spec.missing: Invalid value: \"object\": no such key: x evaluating rule: self.x == 'a'",
            ],
        ),
    ];
    for (spec, want) in cases {
        let object = json!({"spec": spec});
        assert_eq!(messages(&schema, &object, None), want, "spec {spec}");
    }
}

#[test]
fn cel_transition_rules_run_only_with_an_old_value() {
    let schema = cel_schema();
    let old = json!({"spec": {"regionId": "cn-hangzhou", "mode": "x", "named": [{"name": "a", "value": "1"}]}});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"regionId": "cn-hangzhou", "mode": "y", "named": [{"name": "a", "value": "1"}]}),
            vec![],
        ),
        (
            json!({"regionId": "cn-beijing", "mode": "x"}),
            vec!["spec.regionId: Invalid value: \"string\": regionId is immutable"],
        ),
        (
            json!({"regionId": "cn-hangzhou"}),
            vec!["spec: Forbidden: mode cannot be unset"],
        ),
        (
            json!({"regionId": "cn-hangzhou", "mode": "x", "named": [{"name": "b", "value": "2"}, {"name": "a", "value": "3"}]}),
            vec!["spec.named[1].value: Invalid value: \"string\": value is immutable"],
        ),
    ];
    for (spec, want) in cases {
        let object = json!({"spec": spec});
        assert_eq!(messages(&schema, &object, Some(&old)), want, "spec {spec}");
    }
    // A field the old object did not have may be set freely.
    let old_without = json!({"spec": {"mode": "x"}});
    let object = json!({"spec": {"regionId": "cn-beijing", "mode": "x"}});
    assert!(messages(&schema, &object, Some(&old_without)).is_empty());
    // On create no transition rule runs.
    assert!(messages(&schema, &json!({"spec": {"regionId": "x"}}), None).is_empty());
}

#[test]
fn cel_sees_escaped_names_and_root_metadata_name_only() {
    let schema = compile(json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('web')", "message": "name must start with web"},
            {"rule": "!has(self.metadata.labels)", "message": "labels are hidden from rules"}
        ],
        "properties": {
            "metadata": {"type": "object"},
            "spec": {"type": "object",
                "x-kubernetes-validations": [{"rule": "self.weird__dash__name > 0", "message": "weird"}],
                "properties": {"weird-name": {"type": "integer"}}}
        }
    }));
    let ok =
        json!({"metadata": {"name": "web-1", "labels": {"a": "b"}}, "spec": {"weird-name": 1}});
    assert!(messages(&schema, &ok, None).is_empty());
    let bad = json!({"metadata": {"name": "db-1"}, "spec": {"weird-name": 0}});
    assert_eq!(
        messages(&schema, &bad, None),
        vec![
            "<nil>: Invalid value: \"object\": name must start with web",
            "spec: Invalid value: \"object\": weird",
        ]
    );
}

#[test]
fn defaults_apply_recursively() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "policy": {"type": "string", "default": "Delete"},
            "nullableWithDefault": {"type": "string", "nullable": true, "default": "x"},
            "nonNullable": {"type": "string", "default": "filled"},
            "disk": {"type": "object", "default": {}, "properties": {
                "size": {"type": "integer", "default": 40},
                "category": {"type": "string", "default": "cloud_essd"}
            }},
            "list": {"type": "array", "items": {"type": "object", "properties": {"weight": {"type": "integer", "default": 1}}}},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"on": {"type": "boolean", "default": true}}}}
        }
    })));
    let mut object = json!({"spec": {
        "nullableWithDefault": null,
        "nonNullable": null,
        "list": [{}, {"weight": 5}],
        "map": {"a": {}}
    }});
    schema.apply_defaults(&mut object);
    assert_eq!(
        object,
        json!({"spec": {
            "policy": "Delete",
            "nullableWithDefault": null,
            "nonNullable": "filled",
            "disk": {"size": 40, "category": "cloud_essd"},
            "list": [{"weight": 1}, {"weight": 5}],
            "map": {"a": {"on": true}}
        }})
    );
}

#[test]
fn pruning() {
    let schema = compile(json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": {
                "known": {"type": "string"},
                "keepNull": {"type": "string", "nullable": true},
                "defaulted": {"type": "string", "default": "d"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "typed": {"type": "object", "properties": {"a": {"type": "string"}}}
                }},
                "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
        }
    }));
    let mut object = json!({
        "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
        "extra": 1,
        "spec": {
            "known": "k", "unknown": 1, "known2": null,
            "keepNull": null, "defaulted": null,
            "free": {"anything": {"goes": 1}, "typed": {"a": "x", "b": "dropped"}},
            "map": {"k": {"a": "x", "b": "dropped"}},
            "list": [{"a": "x", "b": "dropped"}],
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "junk": 1}
        },
        "status": {"phase": "Ready", "junk": true}
    });
    let unknown = schema.prune_unknown_fields(&mut object);
    assert_eq!(
        unknown,
        vec![
            "extra",
            "spec.free.typed.b",
            "spec.known2",
            "spec.list[0].b",
            "spec.map.k.b",
            "spec.template.junk",
            "spec.unknown",
            "status.junk",
        ]
    );
    assert_eq!(
        object,
        json!({
            "apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
            "spec": {
                "known": "k",
                "keepNull": null, "defaulted": null,
                "free": {"anything": {"goes": 1}, "typed": {"a": "x"}},
                "map": {"k": {"a": "x"}},
                "list": [{"a": "x"}],
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
            },
            "status": {"phase": "Ready"}
        })
    );
}

#[test]
fn admit_runs_prune_default_validate_in_order() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "required": ["policy"],
        "properties": {"policy": {"type": "string", "default": "Delete", "enum": ["Delete", "Orphan"]}}
    })));
    let mut object = json!({"spec": {"policy": null, "junk": 1}});
    assert!(schema.admit(&mut object, None).is_empty());
    assert_eq!(object, json!({"spec": {"policy": "Delete"}}));
}

#[test]
fn embedded_resources_need_api_version_and_kind() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {"template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}
    })));
    let object = json!({"spec": {"template": {"kind": ""}}});
    assert_eq!(
        messages(&schema, &object, None),
        vec![
            "spec.template.apiVersion: Required value: must not be empty",
            "spec.template.kind: Required value: must not be empty",
        ]
    );
}

#[test]
fn compile_errors_name_the_culprit() {
    let cases = [
        (
            wrap_spec(
                json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}),
            ),
            "openAPIV3Schema.properties[spec].properties[a].pattern",
        ),
        (
            wrap_spec(
                json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==", "message": "m"}]}),
            ),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        ),
        (
            wrap_spec(
                json!({"type": "object", "properties": {"regionId": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.regionID == 'x'"}]}),
            ),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: invalid CEL rule \"self.regionID == 'x'\": compilation failed: ERROR: <input>:1:5: undefined field 'regionID'",
        ),
        (
            wrap_spec(
                json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                "x-kubernetes-validations": [{"rule": "self.items[0].b == 'x'"}]}),
            ),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        ),
        (
            wrap_spec(
                json!({"type": "object", "properties": {"size": {"type": "integer", "default": "three"}}}),
            ),
            "openAPIV3Schema.properties[spec].properties[size]: default: Invalid value: \"string\": default in body must be of type integer: \"string\"",
        ),
        (
            wrap_spec(
                json!({"type": "object", "default": {"bogus": 1}, "properties": {"a": {"type": "string"}}}),
            ),
            "openAPIV3Schema.properties[spec]: default.bogus: must not have unknown fields",
        ),
        (
            wrap_spec(
                json!({"type": "object", "default": {}, "required": ["a"], "properties": {"a": {"type": "string"}}}),
            ),
            "openAPIV3Schema.properties[spec]: default.a: Required value",
        ),
        (
            wrap_spec(json!({"type": "strnig"})),
            "openAPIV3Schema.properties[spec].type",
        ),
        (
            wrap_spec(json!({"$ref": "#/definitions/Spec"})),
            "openAPIV3Schema.properties[spec]",
        ),
        (
            wrap_spec(
                json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}),
            ),
            "openAPIV3Schema.properties[spec].x-kubernetes-list-map-keys",
        ),
    ];
    for (schema, path) in cases {
        let err = CompiledSchema::compile(&schema).expect_err("must not compile");
        assert!(
            err.to_string().starts_with(path),
            "error {err} should start with {path}"
        );
    }
}

#[test]
fn rules_may_select_declared_fields_maps_and_unknown_shapes() {
    let schema = json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name != '' && self.kind != '' && has(self.spec.x__dash__y)"},
            {"rule": "self.spec.labels.anything == 'x' || true"},
            {"rule": "self.spec.free.whatever == 1 || true"},
            {"rule": "self.spec.list.all(i, i.anything == 1) || true"},
            {"rule": "self.spec.list[0].a == 'x' || true"}
        ],
        "properties": {"spec": {"type": "object", "properties": {
            "x-y": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}
        }}}
    });
    CompiledSchema::compile(&schema).expect("all selections are valid");
}

#[test]
fn defaults_that_are_defaulted_themselves_are_valid() {
    let schema = wrap_spec(json!({
        "type": "object",
        "default": {},
        "required": ["size"],
        "properties": {"size": {"type": "integer", "default": 3, "minimum": 1}}
    }));
    CompiledSchema::compile(&schema).expect("default {} becomes {size: 3}");
}

#[test]
fn compile_refuses_non_structural_schemas() {
    let err = CompiledSchema::compile(&wrap_spec(json!({"properties": {"a": {"type": "string"}}})))
        .expect_err("spec has no type");
    assert_eq!(
        err.to_string(),
        "openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"
    );
}

#[test]
fn compiled_schema_is_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledSchema>();
}

#[test]
fn ratcheting_tolerates_unchanged_invalid_values_on_update() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "maxLength": 3},
            "other": {"type": "string"},
            "size": {"type": "integer", "maximum": 5,
                "x-kubernetes-validations": [{"rule": "self % 2 == 1", "message": "size must be odd"}]},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 100}}}},
            "choice": {"type": "string", "anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]}
        }
    })));
    // An object that became invalid under a stricter schema.
    let old = json!({"spec": {"name": "toolong", "size": 8, "ports": [{"name": "http", "port": 800}], "choice": "c"}});
    // Touching only another field: the old violations are ratcheted, except quantors.
    let update = json!({"spec": {"name": "toolong", "size": 8, "other": "x",
        "ports": [{"name": "metrics", "port": 90}, {"name": "http", "port": 800}], "choice": "c"}});
    let errors = messages(&schema, &update, Some(&old));
    assert_eq!(
        errors,
        vec![
            "<nil>: Invalid value: \"\": \"spec.choice\" must validate at least one schema (anyOf)",
            "spec.choice: Unsupported value: \"c\": supported values: \"a\"",
        ]
    );
    // Changing an invalid value to another invalid value is rejected.
    let worse = json!({"spec": {"name": "longer", "size": 10, "ports": [{"name": "http", "port": 900}], "choice": "a"}});
    assert_eq!(
        messages(&schema, &worse, Some(&old)),
        vec![
            "spec.name: Too long: may not be more than 3 bytes",
            "spec.ports[0].port: Invalid value: 900: spec.ports[0].port in body should be less than or equal to 100",
            "spec.size: Invalid value: 10: spec.size in body should be less than or equal to 5",
            "spec.size: Invalid value: \"integer\": size must be odd",
        ]
    );
    // Required is never ratcheted; neither is anything on create.
    let missing = json!({"spec": {}});
    assert_eq!(
        messages(&schema, &missing, Some(&missing)),
        vec!["spec.name: Required value"]
    );
    assert_eq!(messages(&schema, &old, None).len(), 6);
}

#[test]
fn cel_treats_nulls_as_absent() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [
            {"rule": "!has(self.opt)", "message": "opt must be absent"}
        ],
        "properties": {"opt": {"type": "string", "nullable": true}}
    })));
    let object = json!({"spec": {"opt": null, "extra": 1}});
    assert!(messages(&schema, &object, None).is_empty());
    let object = json!({"spec": {"opt": "x"}});
    assert_eq!(
        messages(&schema, &object, None),
        vec!["spec: Invalid value: \"object\": opt must be absent"]
    );
}

#[test]
fn optional_old_self_rules_run_on_create_too() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {"zone": {"type": "string", "x-kubernetes-validations": [{
            "rule": "oldSelf.hasValue() ? self == oldSelf.value() : self.startsWith('cn-')",
            "optionalOldSelf": true,
            "message": "zone must start with cn- and never change"
        }]}}
    })));
    let want =
        vec!["spec.zone: Invalid value: \"string\": zone must start with cn- and never change"];
    assert!(messages(&schema, &json!({"spec": {"zone": "cn-a"}}), None).is_empty());
    assert_eq!(
        messages(&schema, &json!({"spec": {"zone": "us-a"}}), None),
        want
    );
    let old = json!({"spec": {"zone": "us-a"}});
    assert!(messages(&schema, &old, Some(&old)).is_empty());
    assert_eq!(
        messages(&schema, &json!({"spec": {"zone": "cn-a"}}), Some(&old)),
        want
    );
    // Only meaningful for transition rules.
    assert!(
        CompiledSchema::compile(&wrap_spec(json!({"type": "string",
        "x-kubernetes-validations": [{"rule": "self != ''", "optionalOldSelf": true}]})))
        .is_err()
    );
}

#[test]
fn kubernetes_library_functions() {
    let rules = [
        ("self.nums.isSorted()", true),
        ("!self.unsorted.isSorted()", true),
        ("self.nums.sum() == 6", true),
        ("self.nums.min() == 1 && self.nums.max() == 3", true),
        ("self.names.max() == 'c'", true),
        ("self.text.find('[0-9]+') == '42'", true),
        ("self.text.findAll('[a-z]') == ['a', 'b']", true),
        ("self.text.findAll('[a-z]', 1) == ['a']", true),
        ("self.text.find('x') == ''", true),
        // Kubernetes functions this sandbox does not implement pass rather than fail.
        ("isURL(self.text)", true),
        ("self.nums.sum() == 7", false),
    ];
    let object = json!({"spec": {"nums": [1, 2, 3], "unsorted": [2, 1], "names": ["a", "c", "b"], "text": "a42b"}});
    for (rule, passes) in rules {
        let schema = compile(wrap_spec(json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": rule}],
            "properties": {
                "nums": {"type": "array", "items": {"type": "integer"}},
                "unsorted": {"type": "array", "items": {"type": "integer"}},
                "names": {"type": "array", "items": {"type": "string"}},
                "text": {"type": "string"}
            }
        })));
        let errors = messages(&schema, &object, None);
        assert_eq!(errors.is_empty(), passes, "{rule}: {errors:?}");
    }
}

#[test]
fn transition_rules_are_never_ratcheted_and_see_each_old_self() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "size": {"type": "integer",
                "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "size may not shrink"}]},
            "region": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "region is immutable"}]},
            "token": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self != oldSelf", "message": "token must rotate"}]},
            "tags": {"type": "object", "additionalProperties": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "oldSelf == self", "message": "tags are immutable"}]}
        }
    })));
    let object = |size: i64, region: &str, token: &str| json!({"spec": {"size": size, "region": region, "token": token, "tags": {"a": "b"}}});
    // The rules are compiled once; every evaluation binds its own oldSelf.
    let v1 = object(3, "cn-a", "t1");
    let v2 = object(4, "cn-a", "t2");
    assert!(messages(&schema, &v2, Some(&v1)).is_empty());
    assert_eq!(
        messages(&schema, &v1, Some(&v2)),
        vec!["spec.size: Invalid value: \"integer\": size may not shrink"]
    );
    let moved = object(4, "cn-b", "t3");
    assert_eq!(
        messages(&schema, &moved, Some(&v2)),
        vec!["spec.region: Invalid value: \"string\": region is immutable"]
    );
    let mut retagged = object(5, "cn-a", "t3");
    retagged["spec"]["tags"]["a"] = json!("c");
    assert_eq!(
        messages(&schema, &retagged, Some(&v2)),
        vec!["spec.tags: Invalid value: \"object\": tags are immutable"]
    );
    // An unchanged object still runs its transition rules: `self != oldSelf` fails on it.
    assert_eq!(
        messages(&schema, &v2, Some(&v2)),
        vec!["spec.token: Invalid value: \"string\": token must rotate"]
    );
    // Other threads evaluate with their own library registration and see the same.
    let from_thread = std::thread::scope(|s| {
        s.spawn(|| messages(&schema, &v1, Some(&v2)))
            .join()
            .expect("thread ran")
    });
    assert_eq!(from_thread, messages(&schema, &v1, Some(&v2)));
}

#[test]
fn cel_ratcheting_skips_only_non_transition_rules_on_unchanged_values() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string",
                "x-kubernetes-validations": [{"rule": "!self.startsWith('http')", "message": "no URLs"}]},
            "other": {"type": "string"}
        }
    })));
    let old = json!({"spec": {"name": "http://x"}});
    let touched_other = json!({"spec": {"name": "http://x", "other": "y"}});
    assert!(messages(&schema, &touched_other, Some(&old)).is_empty());
    let changed = json!({"spec": {"name": "https://x"}});
    assert_eq!(
        messages(&schema, &changed, Some(&old)),
        vec!["spec.name: Invalid value: \"string\": no URLs"]
    );
}

#[test]
fn rules_of_one_node_share_bindings_but_keep_their_own_old_self() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {"list": {"type": "array", "items": {"type": "object",
            "properties": {"n": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.n < 10", "message": "n below 10"}]}}},
        "x-kubernetes-validations": [
            {"rule": "!has(oldSelf.list) || !has(self.list) || size(self.list) >= size(oldSelf.list)",
             "messageExpression": "'list shrank from ' + string(size(oldSelf.list))"},
            {"rule": "!oldSelf.hasValue() || !has(oldSelf.value().list) || has(self.list)",
             "optionalOldSelf": true, "message": "list cannot be removed"},
            {"rule": "has(self.list)", "message": "list is required"}
        ]
    })));
    let old = json!({"spec": {"list": [{"n": 1}, {"n": 2}]}});
    assert!(messages(&schema, &old, None).is_empty());
    assert_eq!(
        messages(&schema, &json!({"spec": {"list": [{"n": 11}]}}), Some(&old)),
        vec![
            "spec: Invalid value: \"object\": list shrank from 2",
            "spec.list[0]: Invalid value: \"object\": n below 10",
        ]
    );
    assert_eq!(
        messages(&schema, &json!({"spec": {}}), Some(&old)),
        vec![
            "spec: Invalid value: \"object\": list cannot be removed",
            "spec: Invalid value: \"object\": list is required",
        ]
    );
}

#[test]
fn unchanged_subtrees_keep_only_unratcheted_errors() {
    let schema = compile(wrap_spec(json!({
        "type": "object",
        "properties": {
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name", "port"], "properties": {
                    "name": {"type": "string", "maxLength": 3},
                    "port": {"type": "integer"},
                    "deep": {"type": "object", "properties": {
                        "leaf": {"type": "string", "enum": ["a"]}}}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "changed": {"type": "string", "maxLength": 1}
        }
    })));
    let old = json!({"spec": {"ports": [{"name": "toolong", "deep": {"leaf": "b"}}], "tags": ["x", "x"], "changed": "a"}});
    let mut new = old.clone();
    new["spec"]["changed"] = json!("bb");
    assert_eq!(
        messages(&schema, &new, Some(&old)),
        vec![
            "spec.changed: Too long: may not be more than 1 byte",
            "spec.ports[0].port: Required value",
            "spec.tags[1]: Duplicate value: \"x\"",
        ]
    );
    // On create nothing is ratcheted.
    assert_eq!(messages(&schema, &new, None).len(), 5);
}
