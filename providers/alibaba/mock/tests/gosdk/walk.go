// The walk of a decoded answer against a response model, by reflection: every field the model
// declares must be present (recursively, into every element of every list and wrapper object)
// and hold a JSON value of the field's type.
package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The kinds of problem the walk reports.
const (
	kindMissing     = "missing"
	kindMistyped    = "mistyped"
	kindUndecodable = "undecodable"
	kindNoModel     = "no-model"
)

// problem is one field of the model the answer does not satisfy. Path names the JSON field with
// list indexes written `[]`, so that one missing field of many elements reads as one path.
type problem struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

type walker struct {
	problems []problem
	seen     map[string]bool
	filled   map[string]bool
}

func (w *walker) report(path, kind, detail string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[path+" "+kind] {
		return
	}
	w.seen[path+" "+kind] = true
	w.problems = append(w.problems, problem{path, kind, detail})
}

func newOf(t reflect.Type) any { return reflect.New(t).Interface() }

// jsonName is the answer's name of a model field ("" when the field is not part of the JSON).
func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// value checks that v (decoded with UseNumber) has the JSON type of t, recursing into objects
// and lists.
func (w *walker) value(t reflect.Type, v any, path string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		w.report(path, kindMistyped, fmt.Sprintf("null where %s is declared", t))
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			w.mistyped(path, t, v)
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name := jsonName(f)
			if name == "" {
				continue
			}
			field, present := obj[name]
			if !present {
				w.report(join(path, name), kindMissing, fmt.Sprintf("%s declared", f.Type))
				continue
			}
			w.value(f.Type, field, join(path, name))
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			w.mistyped(path, t, v)
			return
		}
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		if elem.Kind() == reflect.Struct {
			w.filled[path+"[]"] = w.filled[path+"[]"] || len(list) > 0
		}
		for _, item := range list {
			w.value(t.Elem(), item, path+"[]")
		}
	case reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			w.mistyped(path, t, v)
		}
	case reflect.Interface:
		// Any JSON value decodes into an interface.
	case reflect.String:
		if _, ok := v.(string); !ok {
			w.mistyped(path, t, v)
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			w.mistyped(path, t, v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			w.mistyped(path, t, v)
		} else if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			w.report(path, kindMistyped, fmt.Sprintf("%s declared, %s does not fit", t, n))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			w.mistyped(path, t, v)
		} else if _, err := strconv.ParseUint(n.String(), 10, t.Bits()); err != nil {
			w.report(path, kindMistyped, fmt.Sprintf("%s declared, %s does not fit", t, n))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			w.mistyped(path, t, v)
		}
	default:
		w.report(path, kindMistyped, fmt.Sprintf("the check does not know the model's type %s", t))
	}
}

func (w *walker) mistyped(path string, t reflect.Type, v any) {
	w.report(path, kindMistyped, fmt.Sprintf("%s declared, the answer has %s", t, jsonType(v)))
}

// jsonType names the JSON type of a value decoded with UseNumber.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
