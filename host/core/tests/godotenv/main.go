// Command godotenv-oracle answers, with godotenv v1.5.1 itself (the module
// azd 1.31.2 reads and writes `.env` with), what azd would make of names,
// values and files: the differential tests of host/core/tests hold the
// host's own reader and rules to it.
//
// It reads one JSON document on stdin and writes one on stdout. Every
// string is hex, so any byte crosses unchanged.
//
//	godotenv-oracle marshal-read   [{"names": [...], "values": [...]}, ...]
//	  → for each case: Marshal the map, read the text back, and give the
//	    text, the names and values read, or the error.
//	godotenv-oracle read           ["<file bytes>", ...]
//	  → for each file: the names godotenv had read, and its error if any.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/joho/godotenv"
)

type entries struct {
	Names  []string `json:"names"`
	Values []string `json:"values"`
}

type result struct {
	Text   string   `json:"text,omitempty"`
	Names  []string `json:"names"`
	Values []string `json:"values,omitempty"`
	Error  string   `json:"error,omitempty"`
}

func unhex(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		fail(err)
	}
	return string(b)
}

func enhex(s string) string { return hex.EncodeToString([]byte(s)) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "godotenv-oracle:", err)
	os.Exit(2)
}

// sorted gives the names of m in order, with their values.
func sorted(m map[string]string) ([]string, []string) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	values := make([]string, len(names))
	for i, k := range names {
		names[i], values[i] = enhex(k), enhex(m[k])
	}
	return names, values
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: godotenv-oracle marshal-read|read < cases.json"))
	}
	dec := json.NewDecoder(os.Stdin)
	var out []result
	switch os.Args[1] {
	case "marshal-read":
		var cases []entries
		if err := dec.Decode(&cases); err != nil {
			fail(err)
		}
		for _, c := range cases {
			m := map[string]string{}
			for i := range c.Names {
				m[unhex(c.Names[i])] = unhex(c.Values[i])
			}
			text, err := godotenv.Marshal(m)
			if err != nil {
				fail(err)
			}
			r := result{Text: enhex(text)}
			back, err := godotenv.Unmarshal(text)
			if err != nil {
				r.Error = err.Error()
			}
			r.Names, r.Values = sorted(back)
			out = append(out, r)
		}
	case "read":
		var files []string
		if err := dec.Decode(&files); err != nil {
			fail(err)
		}
		for _, f := range files {
			back, err := godotenv.UnmarshalBytes([]byte(unhex(f)))
			r := result{}
			if err != nil {
				r.Error = err.Error()
			}
			r.Names, r.Values = sorted(back)
			out = append(out, r)
		}
	default:
		fail(fmt.Errorf("unknown mode %q", os.Args[1]))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}
