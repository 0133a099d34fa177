package dispatch_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/botplatform/botplatform/internal/botruntime"
)

// TestMain lets the test binary serve as a bot process (`<test binary>
// bot-vm …`), as the server's binary does: the embedded VM's executor
// starts bot processes with os.Executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "bot-vm" {
		if err := botruntime.Process(os.Args[2:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bot-vm:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
