package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/botplatform/botplatform/internal/platform"
)

// Plugins (docs/plugins.md) are deployed and published as integrations are
// (Kind Plugins); a bot project that adds one builds the plugin's code into
// its own, so the platform keeps the versions, serves their code to the
// CLI, and records what each bot installed: the version, its
// configuration, and which of the bot's integrations back the interfaces
// and integrations the plugin depends on.

// pluginPatch is one entry of updateBot's plugins map.
type pluginPatch struct {
	ID            string                `json:"id"`
	Enabled       *bool                 `json:"enabled"`
	Configuration map[string]any        `json:"configuration"`
	Interfaces    map[string]dependency `json:"interfaces"`
	Integrations  map[string]dependency `json:"integrations"`
}

// dependency names the bot's installation that backs one of a plugin's
// dependencies (integrationInterfaceAlias only for an interface).
type dependency struct {
	IntegrationID             string `json:"integrationId"`
	IntegrationAlias          string `json:"integrationAlias"`
	IntegrationInterfaceAlias string `json:"integrationInterfaceAlias"`
}

// pluginDependencies is a plugin version's dependencies as stored (each
// resolved at deployment).
type pluginDependencies struct {
	Interfaces   map[string]platform.VersionRef `json:"interfaces"`
	Integrations map[string]platform.VersionRef `json:"integrations"`
}

// applyPlugin installs, changes or (raw null) removes the bot's plugin
// under alias. It runs after the bot's integrations are applied: a plugin's
// interfaces are backed by the integrations the bot has after the update.
func (s *Service) applyPlugin(ctx context.Context, b *platform.Bot, alias string, raw json.RawMessage) error {
	at := slices.IndexFunc(b.Plugins, func(p platform.BotPlugin) bool { return p.Alias == alias })
	if isNull(raw) {
		if at >= 0 {
			b.Plugins = slices.Delete(b.Plugins, at, at+1)
		}
		return nil
	}
	field := "plugins." + alias
	if !aliasRe.MatchString(alias) {
		return platform.Invalid(field, "%q is not an alias: lower-case letters, digits, dashes, underscores and slashes", alias)
	}
	var p pluginPatch
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Invalid(field, "must be an object")
	}
	plugin, err := s.usableVersion(ctx, b.WorkspaceID, Plugins, p.ID)
	if err != nil {
		if isNotFound(err) {
			return platform.Errorf(platform.TypeReferenceNotFound, "%s.id: plugin %q not found: deploy it (bp deploy), or name one of the hub's (getPublicPlugin)", field, p.ID)
		}
		return err
	}
	now := s.clock.Now()
	if at < 0 {
		b.Plugins = append(b.Plugins, platform.BotPlugin{Alias: alias, Enabled: true, Configuration: map[string]any{}, CreatedAt: now})
		at = len(b.Plugins) - 1
	}
	bp := &b.Plugins[at]
	bp.PluginID, bp.Name, bp.Version, bp.UpdatedAt = plugin.ID, plugin.Name, plugin.Version, now
	if p.Enabled != nil {
		bp.Enabled = *p.Enabled
	}
	if p.Configuration != nil {
		bp.Configuration = p.Configuration
	}
	src, _ := configurationSchema(plugin, "")
	if err := checkAgainst(src, bp.Configuration); err != nil {
		return platform.Invalid(field+".configuration", "%v", err)
	}
	var deps pluginDependencies
	if len(plugin.Spec.Dependencies) > 0 {
		if err := json.Unmarshal(plugin.Spec.Dependencies, &deps); err != nil {
			return err
		}
	}
	if bp.Interfaces, err = s.backDependencies(ctx, b, plugin, field+".interfaces", deps.Interfaces, p.Interfaces, bp.Interfaces,
		func(f string, in platform.BotIntegration, want platform.VersionRef, m dependency) (map[string]string, error) {
			implAlias, err := s.implements(ctx, in, want, m.IntegrationInterfaceAlias)
			if err != nil {
				return nil, platform.Invalid(f, "%v", err)
			}
			e := map[string]string{"integrationId": in.IntegrationID, "integrationAlias": in.Name, "interfaceId": want.ID}
			if implAlias != "" {
				e["integrationInterfaceAlias"] = implAlias
			}
			return e, nil
		}); err != nil {
		return err
	}
	bp.Integrations, err = s.backDependencies(ctx, b, plugin, field+".integrations", deps.Integrations, p.Integrations, bp.Integrations,
		func(f string, in platform.BotIntegration, want platform.VersionRef, _ dependency) (map[string]string, error) {
			if in.IntegrationID != want.ID {
				if i, err := s.store.GetIntegration(ctx, in.IntegrationID); err != nil || i.Name != want.Name {
					return nil, platform.Invalid(f, "installation %q is not of integration %s", in.Name, want.Name)
				}
			}
			return map[string]string{"integrationId": in.IntegrationID, "integrationAlias": in.Name}, nil
		})
	return err
}

// backDependencies resolves the installations that back a plugin's
// dependencies of one kind (field is plugins.<alias>.interfaces or
// .integrations): those given are checked by bind, those not given keep
// what an earlier update stored (an interface's only if it is still the
// version depended on). The result is what the bot stores.
func (s *Service) backDependencies(ctx context.Context, b *platform.Bot, plugin platform.Integration, field string, deps map[string]platform.VersionRef, given map[string]dependency, stored json.RawMessage,
	bind func(f string, in platform.BotIntegration, want platform.VersionRef, m dependency) (map[string]string, error)) (json.RawMessage, error) {
	var old map[string]map[string]string
	_ = json.Unmarshal(stored, &old)
	out := map[string]map[string]string{}
	for _, name := range sortedKeys(deps) {
		want, f := deps[name], field+"."+name
		m, ok := given[name]
		if !ok {
			if o, kept := old[name]; kept && (o["interfaceId"] == "" || o["interfaceId"] == want.ID) {
				out[name] = o
				continue
			}
			return nil, platform.Invalid(f, "the plugin depends on %s@%s: name the bot's installation that backs it (integrationId, integrationAlias)", want.Name, want.Version)
		}
		in, err := s.backing(ctx, b, f, m.IntegrationID, m.IntegrationAlias)
		if err != nil {
			return nil, err
		}
		if out[name], err = bind(f, in, want, m); err != nil {
			return nil, err
		}
	}
	for _, k := range sortedKeys(given) {
		if _, ok := deps[k]; !ok {
			return nil, platform.Invalid(field+"."+k, "the plugin %s@%s has no such dependency", plugin.Name, plugin.Version)
		}
	}
	return json.Marshal(out)
}

// checkPluginBacking checks that every integration the bot's plugins rely
// on is still installed under the alias they name.
func checkPluginBacking(b *platform.Bot) error {
	for _, p := range b.Plugins {
		for _, m := range []struct {
			kind string
			raw  json.RawMessage
		}{{"interfaces", p.Interfaces}, {"integrations", p.Integrations}} {
			var entries map[string]map[string]string
			_ = json.Unmarshal(m.raw, &entries)
			for _, dep := range sortedKeys(entries) {
				e := entries[dep]
				if !slices.ContainsFunc(b.Integrations, func(in platform.BotIntegration) bool {
					return in.IntegrationID == e["integrationId"] && in.Name == e["integrationAlias"]
				}) {
					return platform.Invalid("plugins."+p.Alias+"."+m.kind+"."+dep, "is backed by integration %q, which the bot no longer has: back it with another installation, or remove the plugin (null)", e["integrationAlias"])
				}
			}
		}
	}
	return nil
}

// backing is the bot's installation a plugin's dependency names: by
// integration id and, when given, alias (the first installation of that
// integration otherwise).
func (s *Service) backing(ctx context.Context, b *platform.Bot, field, integrationID, alias string) (platform.BotIntegration, error) {
	for _, in := range b.Integrations {
		if (integrationID == "" || in.IntegrationID == integrationID) && (alias == "" || in.Name == alias) && (integrationID != "" || alias != "") {
			return in, nil
		}
	}
	return platform.BotIntegration{}, platform.Errorf(platform.TypeReferenceNotFound, "%s: the bot has no installation of integration %q%s: install it first (integrations)",
		field, integrationID, map[bool]string{true: fmt.Sprintf(" under alias %q", alias)}[alias != ""])
}

// implements tells whether the installation's integration implements the
// interface version want, and under which of its aliases for it (alias,
// when given, must be one).
func (s *Service) implements(ctx context.Context, in platform.BotIntegration, want platform.VersionRef, alias string) (string, error) {
	if in.IntegrationID == platform.LLMIntegrationID {
		// The built-in LLM integration implements the llm interface, any version of it (docs/llm.md).
		if want.Name == "llm" && (alias == "" || alias == "llm") {
			return "llm", nil
		}
		return "", fmt.Errorf("integration %s implements interface llm only, not %s", in.Name, want.Name)
	}
	if !in.Deployed() {
		return "", fmt.Errorf("integration %s implements no interface", in.Name)
	}
	i, err := s.store.GetIntegration(ctx, in.IntegrationID)
	if err != nil {
		return "", fmt.Errorf("integration %s: %v", in.Name, err)
	}
	var impl map[string]platform.VersionRef
	_ = json.Unmarshal(i.Spec.Interfaces, &impl)
	for _, k := range sortedKeys(impl) {
		if impl[k].ID == want.ID && (alias == "" || alias == k) {
			return k, nil
		}
	}
	return "", fmt.Errorf("integration %s@%s does not implement interface %s@%s", i.Name, i.Version, want.Name, want.Version)
}

// PluginCode is a plugin version's bundle for platform ("node" or
// "browser").
func PluginCode(p platform.Integration, platformName string) (string, error) {
	var code map[string]string
	if err := json.Unmarshal([]byte(p.Code), &code); err != nil {
		return "", platform.Errorf(platform.TypeResourceNotFound, "plugin %s@%s has no code", p.Name, p.Version)
	}
	c, ok := code[platformName]
	if !ok {
		return "", platform.Invalid("platform", "must be node or browser")
	}
	return c, nil
}

// installedPlugins returns the plugin versions (without their code) the
// bot installed, by id; what cannot be read is left out.
func (s *Service) installedPlugins(ctx context.Context, b platform.Bot) map[string]platform.Integration {
	ids := make([]string, 0, len(b.Plugins))
	for _, p := range b.Plugins {
		ids = append(ids, p.PluginID)
	}
	return versionsByID(ctx, s.store.ListPlugins, ids)
}
