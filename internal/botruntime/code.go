package botruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/botplatform/botplatform/internal/platform"
)

// Check compiles bot code without running it. A syntax error is an
// InvalidPayload error on `code` naming its line and column.
func Check(code string) error {
	_, err := compile(code)
	return err
}

// programs caches compiled code by its sha256; it is emptied when it holds
// maxPrograms versions, so that redeploys do not grow it forever.
var (
	programsMu sync.Mutex
	programs   = map[string]*goja.Program{}
)

const maxPrograms = 256

// compile returns the compiled program for code, compiling it once per
// process whatever the number of VMs that run it.
func compile(code string) (*goja.Program, error) {
	sum := sha256.Sum256([]byte(code))
	key := hex.EncodeToString(sum[:])
	programsMu.Lock()
	p, ok := programs[key]
	programsMu.Unlock()
	if ok {
		return p, nil
	}
	ast, err := parser.ParseFile(nil, "bot.js", code, 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			e := list[0]
			return nil, platform.Invalid("code", "syntax error at line %d, column %d: %s", e.Position.Line, e.Position.Column, e.Message)
		}
		return nil, platform.Invalid("code", "%v", err)
	}
	p, err = goja.CompileAST(ast, false)
	if err != nil {
		var se *goja.CompilerSyntaxError
		if errors.As(err, &se) && se.File != nil {
			pos := se.File.Position(se.Offset)
			return nil, platform.Invalid("code", "syntax error at line %d, column %d: %s", pos.Line, pos.Column, se.Message)
		}
		return nil, platform.Invalid("code", "%v", err)
	}
	programsMu.Lock()
	if len(programs) >= maxPrograms {
		programs = map[string]*goja.Program{}
	}
	programs[key] = p
	programsMu.Unlock()
	return p, nil
}
