// render.go renders a Helm chart's templates the way Helm does, for the chart render tests
// (test/chart/chart.test.ts), without Helm: Go's text/template + sprig (Debian's golang and
// golang-github-masterminds-sprig-dev), run in GOPATH mode against /usr/share/gocode, offline.
//
// Input (stdin, JSON): {"chartDir": "...", "values": {...}, "release": {"name": "...", "namespace": "..."}}.
// The caller passes values already merged over values.yaml (Helm's coalescing: maps merge, anything
// else replaces, null deletes) — the merge lives in the test, next to the values it builds.
// Output (stdout, JSON): {"templates/<file>": "<rendered text>"} for every template not starting
// with "_", or {"error": "..."} with exit code 1.
//
// What is Helm's and reimplemented here (only what chart/ uses, matching Helm 3's engine):
//
//	include NAME DATA  executes a named template into a string (so it can be piped)
//	tpl TEXT DATA      renders a string as a template with the chart's named templates
//	required MSG VAL   fails the render with MSG when VAL is nil or ""
//	toYaml / fromYaml  YAML with 2-space indent, trailing newline trimmed, like Helm's toYaml
//	.Files.Get PATH    a file of the chart directory as a string ("" when missing)
//	missingkey=zero and "<no value>" printed as "", as Helm does in its non-strict mode.
//
// Helm drops sprig's env and expandenv; so does this.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type input struct {
	ChartDir string                 `json:"chartDir"`
	Values   map[string]interface{} `json:"values"`
	Release  struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"release"`
}

// Files is .Files: the chart directory's files, read on demand.
type Files struct{ dir string }

// Get returns a chart file's content, "" when it does not exist (as Helm does).
func (f Files) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
	if err != nil {
		return ""
	}
	return string(b)
}

func toYaml(v interface{}) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func fromYaml(s string) map[string]interface{} {
	out := map[string]interface{}{}
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		out["Error"] = err.Error()
	}
	return out
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fail(err)
	}
	out, err := render(in)
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"error": err.Error()})
	os.Exit(1)
}

func render(in input) (map[string]string, error) {
	chartYaml, err := os.ReadFile(filepath.Join(in.ChartDir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	var meta map[string]interface{}
	if err := yaml.Unmarshal(chartYaml, &meta); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	// Helm exposes Chart.yaml's fields capitalised (.Chart.Name, .Chart.AppVersion).
	chart := map[string]interface{}{}
	for k, v := range meta {
		chart[strings.ToUpper(k[:1])+k[1:]] = v
	}

	paths, err := filepath.Glob(filepath.Join(in.ChartDir, "templates", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)

	root := template.New("chart")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYaml
	funcs["fromYaml"] = fromYaml
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, fmt.Errorf("%s", msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var buf strings.Builder
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf strings.Builder
		err = t.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	root.Funcs(funcs).Option("missingkey=zero")

	var names []string
	for _, p := range paths {
		base := filepath.Base(p)
		if !strings.HasSuffix(base, ".yaml") && !strings.HasSuffix(base, ".tpl") && !strings.HasSuffix(base, ".txt") {
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		name := "templates/" + base
		if _, err := root.New(name).Parse(string(text)); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(base, "_") && strings.HasSuffix(base, ".yaml") {
			names = append(names, name)
		}
	}

	out := map[string]string{}
	for _, name := range names {
		data := map[string]interface{}{
			"Values":   in.Values,
			"Chart":    chart,
			"Files":    Files{dir: in.ChartDir},
			"Release":  map[string]interface{}{"Name": in.Release.Name, "Namespace": in.Release.Namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
			"Template": map[string]interface{}{"Name": name, "BasePath": "templates"},
		}
		var buf strings.Builder
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return nil, err
		}
		out[name] = strings.ReplaceAll(buf.String(), "<no value>", "")
	}
	return out, nil
}
