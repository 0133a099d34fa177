// Package jsonbody checks JSON bodies against JSON Schemas before they are
// decoded, so that every rule of shape (types, unknown properties, bounds,
// enums) fails with the path of the field at fault. The HTTP layer checks
// request bodies with it; chat checks messages, from users and bot code alike.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/botplatform/botplatform/internal/platform"
)

// Schema is a JSON Schema of the program, compiled, with the source it was
// compiled from: bodies are checked with the one, and the API document
// shows the other (internal/openapi), so the two cannot differ.
type Schema struct {
	Name   string
	Source json.RawMessage
	schema *jsonschema.Schema
}

// Compile compiles a JSON Schema given as source; name identifies it in
// panics (a schema is a constant of the program).
func Compile(name, src string) *Schema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
	if err != nil {
		panic(fmt.Sprintf("schema %s: %v", name, err))
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name, doc); err != nil {
		panic(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(src)); err != nil {
		panic(fmt.Sprintf("schema %s: %v", name, err))
	}
	return &Schema{Name: name, Source: compact.Bytes(), schema: c.MustCompile(name)}
}

// Decode checks body against sch, then decodes it into dst.
func Decode(body []byte, sch *Schema, dst any) error {
	if err := Check(body, sch.schema); err != nil {
		return err
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return platform.Invalid("", "%v", err)
	}
	return nil
}

// Check refuses JSON nested too deeply, then validates it against sch:
// what every JSON a user sends goes through before it is decoded.
func Check(body []byte, sch *jsonschema.Schema) error {
	if err := platform.CheckJSON(body, ""); err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return platform.Invalid("", "the body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "invalid character "))
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return validationError(ve)
		}
		return platform.Invalid("", "%v", err)
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// validationError turns the first leaf of a schema failure into a message
// naming the field: "tags.color: maxLength: got 1200, want 1000".
func validationError(ve *jsonschema.ValidationError) error {
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	path := strings.Join(ve.InstanceLocation, ".")
	join := func(p, k string) string {
		if p == "" {
			return k
		}
		return p + "." + k
	}
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		return platform.Invalid(join(path, k.Properties[0]), "unknown property; it is not allowed here")
	case *kind.Required:
		return platform.Invalid(join(path, k.Missing[0]), "is required")
	}
	if path == "" {
		path = "body"
	}
	return platform.Invalid(path, "%s", ve.ErrorKind.LocalizedString(printer))
}

// CompileUser compiles a JSON Schema a user gave (a bot's declarations); a
// schema that does not compile is an error, not a panic. Schemas may not
// load other documents.
func CompileUser(name string, src []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(name, doc); err != nil {
		return nil, err
	}
	return c.Compile(name)
}

// noLoader refuses every reference to a document other than the schema.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: schemas may not refer to other documents", url)
}
