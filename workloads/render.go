package workloads

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

//go:embed *.yaml _common.tpl
var files embed.FS

// Params fills a template.
type Params struct {
	// Template is the template's name (its file name without .yaml).
	Template string
	// Name is the object name prefix, unique within the namespace.
	Name string
	// Namespace is the run's namespace.
	Namespace string
	// RunID is the run label value put on every object.
	RunID string
	// Replicas is the pod count of a Deployment or StatefulSet.
	Replicas int
	// TolerationSeconds is the not-ready/unreachable NoExecute toleration.
	TolerationSeconds int64
}

var tmpl = func() *template.Template {
	t := template.New("workloads").Option("missingkey=error")
	t.Funcs(template.FuncMap{
		// include renders a named template to a string, so it can be piped.
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := t.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
		// indent prefixes every line with n spaces.
		"indent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
	})
	return template.Must(t.ParseFS(files, "_common.tpl", "*.yaml"))
}()

// Names lists the available templates, sorted.
func Names() []string {
	names, _ := fs.Glob(files, "*.yaml")
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".yaml")
	}
	sort.Strings(names)
	return names
}

// Exists reports whether a template of that name exists.
func Exists(name string) bool {
	_, err := fs.Stat(files, name+".yaml")
	return name != "" && err == nil
}

// RenderYAML renders a template to YAML text.
func RenderYAML(p Params) ([]byte, error) {
	if !Exists(p.Template) {
		return nil, fmt.Errorf("unknown workload template %q (have: %s)", p.Template, strings.Join(Names(), ", "))
	}
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, p.Template+".yaml", p); err != nil {
		return nil, fmt.Errorf("rendering workload %q: %w", p.Template, err)
	}
	return b.Bytes(), nil
}

// Render renders a template and decodes it into typed API objects.
func Render(p Params) ([]runtime.Object, error) {
	data, err := RenderYAML(p)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("splitting workload %q: %w", p.Template, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("decoding workload %q: %w", p.Template, err)
		}
		objs = append(objs, obj)
	}
	return objs, nil
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
