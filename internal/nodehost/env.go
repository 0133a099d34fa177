package nodehost

import (
	"errors"
	"os"
	"os/exec"
	"strings"
)

// ErrNoNode is wrapped by the error of Call and Check when no node executable can be found.
var ErrNoNode = errors.New("node executable not found")

type noNodeError struct{ configured string }

func (e noNodeError) Error() string {
	const hint = " (install Node.js 18 or later, or set --node)"
	if e.configured == "" {
		return `this bot's code is a Node bundle and no "node" executable was found on PATH` + hint
	}
	return `this bot's code is a Node bundle and the node executable "` + e.configured + `" was not found` + hint
}

func (e noNodeError) Unwrap() error { return ErrNoNode }

// ErrNoSandbox is wrapped by the error of Call and Check when bundles must run in a sandbox and this
// machine cannot make one.
var ErrNoSandbox = errors.New("no sandbox for Node bundles")

type noSandboxError struct{ why error }

func (e noSandboxError) Error() string {
	return "this bot's code is a Node bundle, which runs only in a sandbox, and this machine cannot make one (" + e.why.Error() +
		"); an operator who trusts every developer of every workspace may start the server with --unsandboxed-bots"
}

func (e noSandboxError) Unwrap() error { return ErrNoSandbox }

// findNode is called for every process start, so that installing Node.js needs no server restart.
func findNode(configured string) (string, error) {
	name := configured
	if name == "" {
		name = "node"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", noNodeError{configured}
	}
	return path, nil
}

// childEnv is the whole environment of a bot's process. The server's own environment holds database URLs
// and secrets, so nothing is inherited but what node needs to run.
func childEnv(home string, extra []string) []string {
	path, ok := os.LookupEnv("PATH")
	if !ok {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path, "HOME=" + home}
	for _, k := range []string{"TZ", "LANG"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "NODE_ENV=production", "BP_LOG_FORMAT=json")
	for _, kv := range extra {
		k, _, ok := strings.Cut(kv, "=")
		// NODE_OPTIONS could lift --max-old-space-size or preload code into the wrapper.
		if !ok || k == "" || k == "NODE_OPTIONS" {
			continue
		}
		env = append(env, kv) // exec.Cmd keeps the last value of a repeated key
	}
	return env
}
