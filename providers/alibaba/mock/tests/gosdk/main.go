// Command gosdk checks the mock's answers against Alibaba Cloud's official Go SDKs: each answer
// (read as JSON from the file named by its one argument, a list of {"api", "action", "body"}) is
// decoded into the SDK's <Action>ResponseBody and walked against the raw JSON, so a field the
// model declares that the answer lacks, or a value of another JSON type than the field's, is
// reported by its path. The report (JSON on stdout) also names the actions of the model table,
// so the caller can check that the table covers every action the mock serves.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// answer is one successful answer of the mock, as the caller captured it.
type answer struct {
	API    string          `json:"api"`
	Action string          `json:"action"`
	Body   json.RawMessage `json:"body"`
}

// verdict is what the check found in one answer.
type verdict struct {
	API      string    `json:"api"`
	Action   string    `json:"action"`
	Problems []problem `json:"problems"`
}

// report is the program's output.
type report struct {
	// Models lists the "API/Action" keys of the model table, sorted.
	Models []string `json:"models"`
	// Answers holds one verdict per answer, in the input's order.
	Answers []verdict `json:"answers"`
	// NeverFilled lists, per "API/Action", the lists of objects that were empty in every answer of
	// the action: their elements' fields were never checked.
	NeverFilled map[string][]string `json:"never_filled"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gosdk ANSWERS.json")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var answers []answer
	if err := json.Unmarshal(raw, &answers); err != nil {
		fmt.Fprintln(os.Stderr, "answers:", err)
		os.Exit(2)
	}
	out := report{Models: modelKeys(), Answers: []verdict{}, NeverFilled: map[string][]string{}}
	filled := map[string]map[string]bool{}
	for _, a := range answers {
		key := a.API + "/" + a.Action
		if filled[key] == nil {
			filled[key] = map[string]bool{}
		}
		out.Answers = append(out.Answers, verdict{a.API, a.Action, check(key, a.Body, filled[key])})
	}
	for key, lists := range filled {
		var empty []string
		for path, seen := range lists {
			if !seen {
				empty = append(empty, path)
			}
		}
		if len(empty) > 0 {
			slices.Sort(empty)
			out.NeverFilled[key] = empty
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// check decodes body into the model of key and walks it; `filled` records, per list of objects,
// whether any answer had an element in it.
func check(key string, body json.RawMessage, filled map[string]bool) []problem {
	model, ok := models[key]
	if !ok {
		return []problem{{Path: "", Kind: kindNoModel, Detail: "no response model in the table for " + key}}
	}
	problems := []problem{}
	// The SDK's own decoding: the whole body into the typed model.
	if err := json.Unmarshal(body, newOf(model)); err != nil {
		problems = append(problems, problem{Path: "", Kind: kindUndecodable, Detail: err.Error()})
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return append(problems, problem{Path: "", Kind: kindUndecodable, Detail: err.Error()})
	}
	w := walker{filled: filled}
	w.value(model, value, "")
	return append(problems, w.problems...)
}

func modelKeys() []string {
	keys := make([]string, 0, len(models))
	for k := range models {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
