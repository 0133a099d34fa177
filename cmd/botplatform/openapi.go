package main

import (
	"context"
	"fmt"
	"io"
	"net/url"

	"github.com/botplatform/botplatform/internal/config"
	"github.com/botplatform/botplatform/internal/console"
	"github.com/botplatform/botplatform/internal/httpapi"
	"github.com/botplatform/botplatform/internal/metrics"
	"github.com/botplatform/botplatform/internal/tunnel"
)

// printOpenAPI prints the OpenAPI document that serve, given the same
// flags, serves at /openapi.json: only the chat URL's path changes it.
func printOpenAPI(_ context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := config.Parse("openapi", args, stderr)
	if err != nil {
		return err
	}
	cfg.Resolve(cfg.Addr)
	chatURL, err := url.Parse(cfg.ChatURL)
	if err != nil {
		return fmt.Errorf("chat-url: %w", err)
	}
	// serve always has metrics and tunnels: the document lists their routes.
	doc := httpapi.Document(httpapi.Deps{ChatPath: chatURL.Path, Version: version, Metrics: metrics.New(), Tunnels: tunnel.New(nil), Console: console.New()})
	_, err = fmt.Fprintf(stdout, "%s\n", doc)
	return err
}
