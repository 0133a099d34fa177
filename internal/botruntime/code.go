package botruntime

import (
	"errors"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/botplatform/botplatform/internal/platform"
)

// compile compiles a bot's code, in a bot process: the server itself never
// compiles bot code (compiling large code costs far more memory than the
// code's size). A syntax error is an InvalidPayload error on `code` naming
// its line and column.
func compile(code string) (*goja.Program, error) {
	ast, err := parser.ParseFile(nil, "bot.js", code, 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			e := list[0]
			return nil, platform.Invalid("code", "syntax error at line %d, column %d: %s", e.Position.Line, e.Position.Column, e.Message)
		}
		return nil, platform.Invalid("code", "%v", err)
	}
	p, err := goja.CompileAST(ast, false)
	if err != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) && se.File != nil {
			pos := se.File.Position(se.Offset)
			return nil, platform.Invalid("code", "syntax error at line %d, column %d: %s", pos.Line, pos.Column, se.Message)
		}
		return nil, platform.Invalid("code", "%v", err)
	}
	return p, nil
}
