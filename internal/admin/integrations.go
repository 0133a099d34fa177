package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/botplatform/botplatform/internal/jsonbody"
	"github.com/botplatform/botplatform/internal/platform"
	"github.com/botplatform/botplatform/internal/store"
)

// Integrations a workspace deploys (`bp deploy` of an integration project,
// docs/integrations.md). One row per version; a production version's
// name@version names it across the server, so that a bot's `bp add` of
// name@version finds one integration. A name is either the workspace's
// handle and a name ("acme/echo", what the CLI deploys from a workspace with
// a handle) or a bare name, which then belongs to the first workspace that
// deploys it (how an operator stocks the hub with the open-source
// integrations, whose names have no handle).

// IntegrationInput is the body of createIntegration and updateIntegration
// (and of their validate… dry runs). Definition fields are JSON-Schema
// documents kept as given; in an update, a null entry of a map (an action,
// an event, a channel…) removes it and a field left out keeps its value.
type IntegrationInput struct {
	Name        *string `json:"name"`
	Version     *string `json:"version"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
	URL         *string `json:"url"`
	SDKVersion  *string `json:"sdkVersion"`
	Icon        *string `json:"icon"`
	Readme      *string `json:"readme"`
	// Code is an integration's bundle (a string), or a plugin's bundles
	// ({"node": …, "browser": …}), kept as that JSON.
	Code             json.RawMessage    `json:"code"`
	Dev              *bool              `json:"dev"`
	Public           *bool              `json:"public"`
	Visibility       *string            `json:"visibility"`
	Secrets          map[string]*string `json:"secrets"`
	Layers           []string           `json:"layers"`
	MaxExecutionTime *int               `json:"maxExecutionTime"`
	Configuration    json.RawMessage    `json:"configuration"`
	Configurations   json.RawMessage    `json:"configurations"`
	Channels         json.RawMessage    `json:"channels"`
	States           json.RawMessage    `json:"states"`
	Events           json.RawMessage    `json:"events"`
	Actions          json.RawMessage    `json:"actions"`
	Entities         json.RawMessage    `json:"entities"`
	User             json.RawMessage    `json:"user"`
	Identifier       json.RawMessage    `json:"identifier"`
	Interfaces       json.RawMessage    `json:"interfaces"`
	Attributes       json.RawMessage    `json:"attributes"`
	ExtraOperations  json.RawMessage    `json:"extraOperations"`
	NameTemplate     json.RawMessage    `json:"nameTemplate"` // an interface's
	Conversation     json.RawMessage    `json:"conversation"` // a plugin's
	Message          json.RawMessage    `json:"message"`      // a plugin's
	Dependencies     json.RawMessage    `json:"dependencies"` // a plugin's
}

// Reserved integration names: the built-in integrations', which bots
// install by these names.
var reservedIntegrationNames = []string{ChatIntegrationID, platform.LLMIntegration, "webchat"}

var (
	integrationNameRe = regexp.MustCompile(`^(?:([a-z0-9][a-z0-9_-]*)/)?([a-z0-9][a-z0-9_-]*)$`)
	interfaceNameRe   = regexp.MustCompile(`^(?:([a-z0-9][a-z0-9_-]*)/)?([a-zA-Z0-9][a-zA-Z0-9_-]*)$`)
	secretNameRe      = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// Bounds of an integration's icon and readme (decoded), shown in every
// answer that shows the integration.
const (
	maxIntegrationIcon   = 256 << 10
	maxIntegrationReadme = 1 << 20
)

// checkIntegrationName checks a new integration's name against the
// workspace's handle and the names other workspaces hold.
func (s *Service) checkIntegrationName(ctx context.Context, k Kind, w platform.Workspace, name string, dev bool) error {
	re := integrationNameRe
	if k == Interfaces {
		re = interfaceNameRe // the SDK's: speechToText, textToImage
	}
	m := re.FindStringSubmatch(name)
	if m == nil || len(name) > 200 {
		return platform.Invalid("name", "%q is not an %s name: letters, digits, dashes and underscores, optionally after the workspace's handle and a slash (\"%s/my-%s\")", name, k.noun, handleOr(w), k.noun)
	}
	handle := m[1]
	switch {
	case handle != "" && handle != w.Handle:
		return platform.Invalid("name", "%q starts with the handle %q, and this workspace's handle is %s", name, handle, quotedOrNone(w.Handle))
	case handle == "" && k == Integrations && slices.Contains(reservedIntegrationNames, name):
		return platform.Invalid("name", "%q is a built-in integration's name", name)
	}
	if handle == "" && !dev {
		// A bare name belongs to the workspace that deployed it first (a
		// dev version, `bp dev`'s, is its developer's own).
		taken, _, err := s.definitions(k).list(ctx, store.IntegrationFilter{Page: store.Page{Limit: 1}, Name: name})
		if err != nil {
			return err
		}
		if len(taken) > 0 && taken[0].WorkspaceID != w.ID {
			return platform.Errorf(platform.TypeAlreadyExists, "name: %s %q belongs to another workspace; name yours after your workspace's handle (\"%s/%s\")", k.noun, name, handleOr(w), name)
		}
	}
	return nil
}

func handleOr(w platform.Workspace) string {
	if w.Handle != "" {
		return w.Handle
	}
	return "<handle>"
}

func quotedOrNone(h string) string {
	if h == "" {
		return "not set (updateWorkspace sets it)"
	}
	return fmt.Sprintf("%q", h)
}

// applyIntegration checks in and applies it to i: all of it for a new
// integration, what it carries for an update.
func applyIntegration(i *platform.Integration, in *IntegrationInput, update bool) error {
	sp := &i.Spec
	if in.Version != nil {
		if update && *in.Version != i.Version {
			return platform.Invalid("version", "cannot be changed: deploy %s as a new integration version", *in.Version)
		}
		if _, err := semver.StrictNewVersion(*in.Version); err != nil {
			return platform.Invalid("version", "%q is not a semantic version (e.g. 0.1.0)", *in.Version)
		}
		i.Version = *in.Version
	}
	if in.Dev != nil && update && *in.Dev != i.Dev {
		return platform.Invalid("dev", "cannot be changed after the integration is created")
	}
	for _, f := range []struct {
		v   *string
		dst *string
	}{{in.Title, &sp.Title}, {in.Description, &sp.Description}, {in.URL, &sp.URL}, {in.SDKVersion, &sp.SDKVersion}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	for _, f := range []struct {
		field string
		v     *string
		dst   *string
		max   int
	}{{"icon", in.Icon, &sp.Icon, maxIntegrationIcon}, {"readme", in.Readme, &sp.Readme, maxIntegrationReadme}} {
		if f.v == nil {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(*f.v)
		if err != nil && i.Dev {
			continue // `bp dev` sends the file's name: a dev version shows none
		}
		if err != nil {
			return platform.Invalid(f.field, "must be base64 (what `bp deploy` sends)")
		}
		if len(raw) > f.max {
			return platform.Invalid(f.field, "is %d bytes, more than the %d allowed", len(raw), f.max)
		}
		*f.dst = *f.v
	}
	if in.Code != nil {
		var code string
		if json.Unmarshal(in.Code, &code) != nil {
			code = string(in.Code) // a plugin's bundles, checked by the request's schema
		}
		i.Code = code
	}
	switch {
	case in.Visibility != nil:
		i.Visibility = *in.Visibility
	case in.Public != nil && *in.Public:
		i.Visibility = "public"
	case in.Public != nil && !update:
		i.Visibility = "private"
	}
	if i.Dev && i.Visibility != "private" {
		return platform.Invalid("visibility", "a dev integration is private to its workspace")
	}
	for name, v := range in.Secrets {
		if !secretNameRe.MatchString(name) {
			return platform.Invalid("secrets."+name, "a secret's name is SCREAMING_SNAKE_CASE (the code reads it as SECRET_%s)", strings.ToUpper(name))
		}
		if v == nil {
			delete(sp.Secrets, name)
			continue
		}
		if sp.Secrets == nil {
			sp.Secrets = map[string]string{}
		}
		sp.Secrets[name] = *v
	}
	if in.Layers != nil {
		sp.Layers = in.Layers
	}
	if in.MaxExecutionTime != nil {
		sp.MaxExecutionTime = in.MaxExecutionTime
	}
	for _, f := range []struct {
		v   json.RawMessage
		dst *json.RawMessage
		// entries: a map whose null entries remove (a field replaced
		// whole otherwise).
		entries bool
	}{
		{in.Configuration, &sp.Configuration, false}, {in.Configurations, &sp.Configurations, true},
		{in.Channels, &sp.Channels, true}, {in.States, &sp.States, true}, {in.Events, &sp.Events, true},
		{in.Actions, &sp.Actions, true}, {in.Entities, &sp.Entities, true}, {in.User, &sp.User, false},
		{in.Identifier, &sp.Identifier, false}, {in.Interfaces, &sp.Interfaces, true}, {in.Attributes, &sp.Attributes, true},
		{in.ExtraOperations, &sp.ExtraOperations, true}, {in.NameTemplate, &sp.NameTemplate, false},
		{in.Conversation, &sp.Conversation, false}, {in.Message, &sp.Message, false}, {in.Dependencies, &sp.Dependencies, false},
	} {
		if f.v == nil {
			continue
		}
		merged, err := mergeDefinition(*f.dst, f.v, f.entries)
		if err != nil {
			return err
		}
		*f.dst = merged
	}
	return checkSchemas(*sp)
}

// mergeDefinition applies a definition field of an update to what is
// stored: a map field keeps its entries the patch does not name, removes
// those it names null and replaces the others; any other field is
// replaced. Nulls inside a value kept are dropped (the CLI sends them for
// what the new version no longer declares).
func mergeDefinition(stored, patch json.RawMessage, entries bool) (json.RawMessage, error) {
	var p any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	dropUI(p)
	pm, isMap := p.(map[string]any)
	if !entries || !isMap {
		return json.Marshal(dropNulls(p))
	}
	out := map[string]any{}
	if len(stored) > 0 {
		if err := json.Unmarshal(stored, &out); err != nil {
			return nil, err
		}
	}
	for k, v := range pm {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = dropNulls(v)
		}
	}
	return json.Marshal(out)
}

// dropUI removes the "ui" hints that definitions of @botpress/sdk 0.x
// carry beside their schemas (the Studio's form layout: no part of an
// integration's contract), leaving JSON Schemas as they are.
func dropUI(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "ui":
				delete(x, k)
			case "schema":
			default:
				dropUI(e)
			}
		}
	case []any:
		for _, e := range x {
			dropUI(e)
		}
	}
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for k := range x {
			x[k] = dropNulls(x[k])
		}
	}
	return v
}

// CreateVersion deploys a new version of an integration (or an interface)
// in the actor's workspace; with dryRun it only checks it
// (validateIntegrationCreation).
func (s *Service) CreateVersion(ctx context.Context, a *platform.Actor, k Kind, in IntegrationInput, dryRun bool) (platform.Integration, error) {
	if err := require(a, platform.RoleDeveloper, "deploying an "+k.noun); err != nil {
		return platform.Integration{}, err
	}
	if in.Name == nil || in.Version == nil {
		return platform.Integration{}, platform.Invalid("", "name and version are required")
	}
	w, err := s.store.GetWorkspace(ctx, a.Member.WorkspaceID)
	if err != nil {
		return platform.Integration{}, notFound(err, "workspace", a.Member.WorkspaceID)
	}
	now := s.clock.Now()
	i := platform.Integration{
		ID: platform.NewID(platform.PrefixIntegration), WorkspaceID: w.ID, Name: *in.Name, Visibility: "private",
		CreatedBy: a.Account.ID, CreatedAt: now, UpdatedAt: now,
	}
	if in.Dev != nil {
		i.Dev = *in.Dev
	}
	if err := s.checkIntegrationName(ctx, k, w, i.Name, i.Dev); err != nil {
		return i, err
	}
	if err := applyIntegration(&i, &in, false); err != nil {
		return i, err
	}
	if err := s.implemented(ctx, a, k, &i); err != nil {
		return i, err
	}
	v := s.definitions(k)
	if !i.Dev {
		if _, err := v.byName(ctx, i.Name, i.Version); err == nil {
			return i, k.exists(i)
		} else if !errors.Is(err, platform.ErrNotFound) {
			return i, err
		}
	}
	if dryRun {
		return i, nil
	}
	if err := v.create(ctx, i); err != nil {
		if errors.Is(err, platform.ErrConflict) {
			return i, k.exists(i)
		}
		return i, err
	}
	return i, nil
}

func (k Kind) exists(i platform.Integration) error {
	return platform.Errorf(platform.TypeAlreadyExists, "%s %s version %s exists: update it or deploy another version", k.noun, i.Name, i.Version)
}

// UpdateVersion changes an integration (or interface) version of the
// actor's workspace; with dryRun it only checks the change
// (validateIntegrationUpdate). A version in the hub (public or unlisted)
// is what bots of other workspaces installed: it stays as it is, and a
// change is a new version.
func (s *Service) UpdateVersion(ctx context.Context, a *platform.Actor, k Kind, id string, in IntegrationInput, dryRun bool) (platform.Integration, error) {
	if err := require(a, platform.RoleDeveloper, "updating an "+k.noun); err != nil {
		return platform.Integration{}, err
	}
	i, err := s.GetVersion(ctx, a, k, id)
	if err != nil {
		return i, err
	}
	if i.InHub() {
		return i, platform.Errorf(platform.TypeForbidden, "%s %s version %s is %s: deploy the change as a new version", k.noun, i.Name, i.Version, i.Visibility)
	}
	if in.Name != nil && *in.Name != i.Name {
		return i, platform.Invalid("name", "cannot be changed (it is %q)", i.Name)
	}
	if err := applyIntegration(&i, &in, true); err != nil {
		return i, err
	}
	if err := s.implemented(ctx, a, k, &i); err != nil {
		return i, err
	}
	i.UpdatedAt = s.clock.Now()
	if dryRun {
		return i, nil
	}
	if err := s.definitions(k).update(ctx, i); err != nil {
		return i, notFound(err, k.noun, id)
	}
	return i, nil
}

// GetVersion returns an integration (or interface) version of the actor's
// workspace, code included.
func (s *Service) GetVersion(ctx context.Context, a *platform.Actor, k Kind, id string) (platform.Integration, error) {
	i, err := s.definitions(k).get(ctx, id)
	// A workspace sees its own versions, and of interfaces the hub's too
	// (@botpress/cli 0.8.59 looks up the interfaces an integration
	// implements with getInterfaceByName).
	if err == nil && i.WorkspaceID != a.Member.WorkspaceID && !(k == Interfaces && i.InHub()) {
		err = platform.ErrNotFound
	}
	return i, notFound(err, k.noun, id)
}

// DeleteVersion removes an integration (or interface) version of the
// actor's workspace.
func (s *Service) DeleteVersion(ctx context.Context, a *platform.Actor, k Kind, id string) error {
	if err := require(a, platform.RoleDeveloper, "deleting an "+k.noun); err != nil {
		return err
	}
	// Bots run what they installed: the version stays while one has it.
	count := map[Kind]func(context.Context, string) (int, error){Integrations: s.store.CountInstallations, Plugins: s.store.CountPluginInstallations}[k]
	if count != nil {
		if n, err := count(ctx, id); err != nil {
			return err
		} else if n > 0 {
			if _, err := s.GetVersion(ctx, a, k, id); err != nil {
				return err
			}
			return platform.Errorf(platform.TypeReferenceConstraint, "%s %s is installed in %d bot(s): remove it from them (updateBot) first", k.noun, id, n)
		}
	}
	return notFound(s.definitions(k).del(ctx, a.Member.WorkspaceID, id), k.noun, id)
}

// GetVersionByName resolves name@version among the production versions
// of the actor's workspace; version is a semantic version, a range
// ("^0.4.0") or "latest".
func (s *Service) GetVersionByName(ctx context.Context, a *platform.Actor, k Kind, name, version string) (platform.Integration, error) {
	i, err := s.resolve(ctx, k, store.IntegrationFilter{WorkspaceID: a.Member.WorkspaceID}, name, version)
	if isNotFound(err) && !strings.Contains(name, "/") {
		// A bare name names the workspace's own "<handle>/<name>" too: a
		// bot project adds an integration by the name its definition has
		// (bp add ../telegram), and `bp deploy` named it after the handle.
		if w, werr := s.store.GetWorkspace(ctx, a.Member.WorkspaceID); werr == nil && w.Handle != "" {
			if own, oerr := s.resolve(ctx, k, store.IntegrationFilter{WorkspaceID: w.ID}, w.Handle+"/"+name, version); oerr == nil {
				return own, nil
			}
		}
	}
	if k == Interfaces && isNotFound(err) {
		return s.HubVersion(ctx, k, name, version)
	}
	return i, err
}

func isNotFound(err error) bool {
	var pe *platform.Error
	return errors.As(err, &pe) && pe.Type == platform.TypeResourceNotFound
}

// HubVersion resolves name@version among the versions every workspace may
// use (public and unlisted), as GetVersionByName.
func (s *Service) HubVersion(ctx context.Context, k Kind, name, version string) (platform.Integration, error) {
	return s.resolve(ctx, k, store.IntegrationFilter{Visibility: []string{"public", "unlisted"}}, name, version)
}

// HubVersionByID returns a version of the hub by its id.
func (s *Service) HubVersionByID(ctx context.Context, k Kind, id string) (platform.Integration, error) {
	i, err := s.definitions(k).get(ctx, id)
	if err == nil && !i.InHub() {
		err = platform.ErrNotFound
	}
	return i, notFound(err, k.noun, id)
}

func (s *Service) resolve(ctx context.Context, k Kind, f store.IntegrationFilter, name, version string) (platform.Integration, error) {
	v := s.definitions(k)
	no := false
	f.Name, f.Dev = name, &no
	var want *semver.Constraints
	if version != "latest" {
		if _, err := semver.StrictNewVersion(version); err == nil {
			// An exact version: one row at most.
			i, err := v.byName(ctx, name, version)
			if err == nil && (f.WorkspaceID != "" && i.WorkspaceID != f.WorkspaceID || f.WorkspaceID == "" && !i.InHub()) {
				err = platform.ErrNotFound
			}
			return i, k.notFound(err, name, version)
		}
		c, err := semver.NewConstraint(version)
		if err != nil {
			return platform.Integration{}, platform.Errorf(platform.TypeInvalidQuery, "version: %q is neither a semantic version, a range nor \"latest\"", version)
		}
		want = c
	}
	var best *platform.Integration
	var bestV *semver.Version
	f.Limit = 100
	for {
		page, next, err := v.list(ctx, f)
		if err != nil {
			return platform.Integration{}, err
		}
		for k := range page {
			v, err := semver.NewVersion(page[k].Version)
			if err != nil || want != nil && !want.Check(v) || bestV != nil && !v.GreaterThan(bestV) {
				continue
			}
			best, bestV = &page[k], v
		}
		if next == "" {
			break
		}
		f.Token = next
	}
	if best == nil {
		return platform.Integration{}, k.notFound(platform.ErrNotFound, name, version)
	}
	// The listing leaves the code out.
	i, err := v.get(ctx, best.ID)
	return i, k.notFound(err, name, version)
}

func (k Kind) notFound(err error, name, version string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.Errorf(platform.TypeResourceNotFound, "%s %q version %q not found", k.noun, name, version)
	}
	return err
}

// IntegrationFilter narrows ListIntegrations and ListHubIntegrations.
type IntegrationFilter struct {
	Token, Name, Version string
	Dev                  *bool
	Limit                int
}

// ListVersions lists the integration (or interface) versions of the
// actor's workspace, oldest first.
func (s *Service) ListVersions(ctx context.Context, a *platform.Actor, k Kind, f IntegrationFilter) ([]platform.Integration, string, error) {
	return s.listVersions(ctx, k, store.IntegrationFilter{WorkspaceID: a.Member.WorkspaceID, Dev: f.Dev}, f)
}

// ListHubVersions lists the public versions of every workspace (unlisted
// ones are found by name or id only).
func (s *Service) ListHubVersions(ctx context.Context, k Kind, f IntegrationFilter) ([]platform.Integration, string, error) {
	no := false
	return s.listVersions(ctx, k, store.IntegrationFilter{Visibility: []string{"public"}, Dev: &no}, f)
}

func (s *Service) listVersions(ctx context.Context, k Kind, sf store.IntegrationFilter, f IntegrationFilter) ([]platform.Integration, string, error) {
	sf.Page = store.Page{Token: f.Token, Limit: f.Limit}
	sf.Name = f.Name
	if f.Version != "" && f.Version != "latest" {
		sf.Version = f.Version
	}
	list, next, err := s.definitions(k).list(ctx, sf)
	if err != nil || f.Version != "latest" {
		return list, next, err
	}
	// "latest": each name's highest version of this page.
	latest := map[string]int{}
	for k, i := range list {
		at, seen := latest[i.Name]
		if !seen || semverGreater(i.Version, list[at].Version) {
			latest[i.Name] = k
		}
	}
	kept := list[:0:0]
	for k, i := range list {
		if latest[i.Name] == k {
			kept = append(kept, i)
		}
	}
	return kept, next, nil
}

func semverGreater(a, b string) bool {
	va, errA := semver.NewVersion(a)
	vb, errB := semver.NewVersion(b)
	return errA == nil && (errB != nil || va.GreaterThan(vb))
}

// IntegrationOwner is the workspace that deployed an integration, as the
// hub shows it.
func (s *Service) IntegrationOwner(ctx context.Context, workspaceID string) (platform.Workspace, error) {
	return s.store.GetWorkspace(ctx, workspaceID)
}

// CheckHandleAvailability says whether the actor's workspace may take
// handle: free, or its own already; when not, it suggests free ones.
func (s *Service) CheckHandleAvailability(ctx context.Context, a *platform.Actor, handle string) (available bool, suggestions []string, usedBy string, err error) {
	if !handleRe.MatchString(handle) {
		return false, nil, "", platform.Invalid("handle", "3 to 50 lower-case letters, digits or dashes, not starting or ending with a dash")
	}
	taken := func(h string) (string, error) {
		w, err := s.store.GetWorkspaceByHandle(ctx, h)
		if errors.Is(err, platform.ErrNotFound) {
			return "", nil
		}
		return w.ID, err
	}
	owner, err := taken(handle)
	if err != nil {
		return false, nil, "", err
	}
	if owner == "" || owner == a.Member.WorkspaceID {
		return true, []string{}, owner, nil
	}
	suggestions = []string{}
	for n := 1; len(suggestions) < 3 && n <= 20; n++ {
		h := fmt.Sprintf("%s-%d", handle, n)
		if len(h) > 50 || !handleRe.MatchString(h) {
			break
		}
		if o, err := taken(h); err != nil {
			return false, nil, "", err
		} else if o == "" {
			suggestions = append(suggestions, h)
		}
	}
	return false, suggestions, "", nil
}

// aliasRe is what a bot may install an integration as: its name, or an
// alias of its own (what "<alias>:<action>" and "<alias>:<event>" start
// with).
var aliasRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_/-]{0,199}$`)

// installable finds the integration version id that a bot of workspace
// ws may install: one of the workspace's own, or one of the hub's.
func (s *Service) installable(ctx context.Context, ws, id string) (platform.Integration, error) {
	list, _, err := s.store.ListIntegrations(ctx, store.IntegrationFilter{Page: store.Page{Limit: 1}, IDs: []string{id}})
	if err != nil {
		return platform.Integration{}, err
	}
	if len(list) == 0 || list[0].WorkspaceID != ws && !list[0].InHub() {
		return platform.Integration{}, platform.ErrNotFound
	}
	return list[0], nil
}

// configurationSchema is the JSON Schema of the configuration named
// configType of an integration version ("": its default one), or nil when
// it declares none.
func configurationSchema(i platform.Integration, configType string) (json.RawMessage, bool) {
	var def struct {
		Schema json.RawMessage `json:"schema"`
	}
	src := i.Spec.Configuration
	if configType != "" {
		var all map[string]json.RawMessage
		if json.Unmarshal(i.Spec.Configurations, &all) != nil || all[configType] == nil {
			return nil, false
		}
		src = all[configType]
	}
	if len(src) == 0 || json.Unmarshal(src, &def) != nil {
		return nil, true
	}
	return def.Schema, true
}

// checkConfiguration checks an installation's configuration against the
// integration's schema for it; the error names the field at fault.
func checkConfiguration(i platform.Integration, in *platform.BotIntegration) error {
	src, ok := configurationSchema(i, in.ConfigurationType)
	if !ok {
		return fmt.Errorf("configurationType: integration %s has no configuration %q", i.Name, in.ConfigurationType)
	}
	if err := checkAgainst(src, in.Configuration); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// checkAgainst checks a configuration against a definition's JSON Schema
// for it (none: anything goes); the error names the field at fault.
func checkAgainst(src json.RawMessage, cfg map[string]any) error {
	if len(src) == 0 || string(src) == "null" {
		return nil
	}
	sch, err := jsonbody.CompileUser("configuration.json", src)
	if err != nil {
		return nil // checked at deployment; a version deployed before that check runs unchecked
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		return errors.New("must be an object")
	}
	if err := jsonbody.Check(raw, sch); err != nil {
		var pe *platform.Error
		if errors.As(err, &pe) {
			return errors.New(pe.Message)
		}
		return err
	}
	return nil
}

// checkSchemas compiles the configuration schemas of an integration being
// deployed, so that an installation can be checked against them.
func checkSchemas(sp platform.IntegrationSpec) error {
	check := func(field string, def json.RawMessage) error {
		var d struct {
			Schema json.RawMessage `json:"schema"`
		}
		if len(def) == 0 || json.Unmarshal(def, &d) != nil || len(d.Schema) == 0 {
			return nil
		}
		if _, err := jsonbody.CompileUser("configuration.json", d.Schema); err != nil {
			return platform.Invalid(field+".schema", "is not a JSON Schema: %v", err)
		}
		return nil
	}
	if err := check("configuration", sp.Configuration); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(sp.Configurations, &all)
	for _, k := range sortedKeys(all) {
		if err := check("configurations."+k, all[k]); err != nil {
			return err
		}
	}
	return nil
}

// Registrar tells integrations' code about its installations (package
// integration): register when a bot installs one or changes its
// installation, unregister when it removes it.
type Registrar interface {
	Register(ctx context.Context, b platform.Bot, in platform.BotIntegration) (status, reason string)
	Unregister(ctx context.Context, b platform.Bot, in platform.BotIntegration)
}

// registerInstallations tells the integrations about b's installations
// that changed since before: each new or changed one is registered and
// its status stored, each removed one unregistered (its key deleted).
func (s *Service) registerInstallations(ctx context.Context, before, b *platform.Bot) error {
	kept := map[string]bool{}
	changed := false
	for k := range b.Integrations {
		in := &b.Integrations[k]
		kept[in.Name+"\x00"+in.IntegrationID] = true
		if !in.Deployed() || in.Status != "" {
			continue
		}
		if s.registrar == nil {
			in.Status, in.StatusReason = platform.IntegrationRegistrationFailed, "this server does not run integrations' code"
		} else {
			in.Status, in.StatusReason = s.registrar.Register(ctx, *b, *in)
		}
		changed = true
	}
	if before != nil {
		for _, in := range before.Integrations {
			if !in.Deployed() || kept[in.Name+"\x00"+in.IntegrationID] {
				continue
			}
			if s.registrar != nil {
				s.registrar.Unregister(ctx, *before, in)
			}
			if !slices.ContainsFunc(b.Integrations, func(x platform.BotIntegration) bool { return x.Name == in.Name }) {
				if err := s.RemoveIntegrationKey(ctx, *b, in.Name); err != nil {
					return err
				}
			}
		}
	}
	if !changed {
		return nil
	}
	return s.store.UpdateIntegrationStatus(ctx, b.ID, b.Integrations)
}

// Installed returns the integration versions (without their code) of the
// bot's deployed integrations and its plugins' versions, by id; what
// cannot be read is left out.
func (s *Service) Installed(ctx context.Context, b platform.Bot) map[string]platform.Integration {
	out := s.installedIntegrations(ctx, b)
	for id, p := range s.installedPlugins(ctx, b) {
		out[id] = p
	}
	return out
}

func (s *Service) installedIntegrations(ctx context.Context, b platform.Bot) map[string]platform.Integration {
	var ids []string
	for _, in := range b.Integrations {
		if in.Deployed() {
			ids = append(ids, in.IntegrationID)
		}
	}
	return versionsByID(ctx, s.store.ListIntegrations, ids)
}

// versionsByID reads the versions of ids (without their code) through list
// (ListIntegrations, ListPlugins), by id, in one query; what cannot be
// read is left out.
func versionsByID(ctx context.Context, list func(context.Context, store.IntegrationFilter) ([]platform.Integration, string, error), ids []string) map[string]platform.Integration {
	out := map[string]platform.Integration{}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return out
	}
	vs, _, err := list(ctx, store.IntegrationFilter{Page: store.Page{Limit: len(ids)}, IDs: ids})
	if err != nil {
		return out
	}
	for _, v := range vs {
		v.Code = ""
		out[v.ID] = v
	}
	return out
}

// IntegrationWebhookURL is where an installation's provider sends its
// webhooks (docs/integrations.md).
func (s *Service) IntegrationWebhookURL(webhookID string) string {
	return s.integrationWebhooks + "/" + webhookID
}

// Kind is what a versioned definition is: an integration, or an interface
// integrations implement. Both are deployed, named, versioned, resolved
// and published alike, each in its own name space.
type Kind struct{ noun string }

// The kinds of versioned definitions.
var (
	Integrations = Kind{"integration"}
	Interfaces   = Kind{"interface"}
	Plugins      = Kind{"plugin"}
)

// versionStore is the store's access to one kind's versions.
type versionStore struct {
	create func(ctx context.Context, i platform.Integration) error
	get    func(ctx context.Context, id string) (platform.Integration, error)
	byName func(ctx context.Context, name, version string) (platform.Integration, error)
	update func(ctx context.Context, i platform.Integration) error
	del    func(ctx context.Context, workspaceID, id string) error
	list   func(ctx context.Context, f store.IntegrationFilter) ([]platform.Integration, string, error)
}

func (s *Service) definitions(k Kind) versionStore {
	switch k {
	case Interfaces:
		return versionStore{s.store.CreateInterface, s.store.GetInterface, s.store.GetInterfaceByName, s.store.UpdateInterface, s.store.DeleteInterface, s.store.ListInterfaces}
	case Plugins:
		return versionStore{s.store.CreatePlugin, s.store.GetPlugin, s.store.GetPluginByName, s.store.UpdatePlugin, s.store.DeletePlugin, s.store.ListPlugins}
	}
	return versionStore{s.store.CreateIntegration, s.store.GetIntegration, s.store.GetIntegrationByName, s.store.UpdateIntegration, s.store.DeleteIntegration, s.store.ListIntegrations}
}

// implemented checks the interfaces an integration says it implements
// (each entry names an interface by id, which the workspace must see) and
// completes each entry with the interface's name and version.
func (s *Service) implemented(ctx context.Context, a *platform.Actor, k Kind, i *platform.Integration) error {
	if k == Plugins {
		return s.dependencies(ctx, a, i)
	}
	if k != Integrations || len(i.Spec.Interfaces) == 0 {
		return nil
	}
	var entries map[string]map[string]any
	if err := json.Unmarshal(i.Spec.Interfaces, &entries); err != nil {
		return platform.Invalid("interfaces", "must be an object of objects")
	}
	for _, key := range sortedKeys(entries) {
		e := entries[key]
		id, _ := e["id"].(string)
		impl, err := s.GetVersion(ctx, a, Interfaces, id)
		if err != nil {
			return platform.Errorf(platform.TypeReferenceNotFound, "interfaces.%s.id: interface %q not found", key, id)
		}
		e["name"], e["version"] = impl.Name, impl.Version
		for _, m := range []string{"entities", "actions", "events", "channels"} {
			if e[m] == nil {
				e[m] = map[string]any{}
			}
		}
	}
	raw, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	i.Spec.Interfaces = raw
	return nil
}

// dependencies resolves the interfaces and integrations a plugin depends
// on, each entry naming a version by id or by name and version (a range
// too), among the workspace's own versions and the hub's, to {id, name,
// version}.
func (s *Service) dependencies(ctx context.Context, a *platform.Actor, i *platform.Integration) error {
	type ref struct{ ID, Name, Version string }
	var deps struct{ Interfaces, Integrations map[string]ref }
	if len(i.Spec.Dependencies) > 0 {
		if err := json.Unmarshal(i.Spec.Dependencies, &deps); err != nil {
			return platform.Invalid("dependencies", "must be {interfaces, integrations}, each an object of references")
		}
	}
	out := map[string]map[string]any{"interfaces": {}, "integrations": {}}
	for _, d := range []struct {
		field   string
		kind    Kind
		entries map[string]ref
	}{{"interfaces", Interfaces, deps.Interfaces}, {"integrations", Integrations, deps.Integrations}} {
		for _, alias := range sortedKeys(d.entries) {
			e := d.entries[alias]
			field := "dependencies." + d.field + "." + alias
			var v platform.Integration
			var err error
			switch {
			case e.ID != "":
				v, err = s.usableVersion(ctx, a.Member.WorkspaceID, d.kind, e.ID)
			case e.Name != "" && e.Version != "":
				if v, err = s.GetVersionByName(ctx, a, d.kind, e.Name, e.Version); isNotFound(err) {
					v, err = s.HubVersion(ctx, d.kind, e.Name, e.Version)
				}
			default:
				return platform.Invalid(field, "names a version by id, or by name and version")
			}
			if isNotFound(err) {
				return platform.Errorf(platform.TypeReferenceNotFound, "%s: %s", field, err.(*platform.Error).Message)
			} else if err != nil {
				return err
			}
			out[d.field][alias] = map[string]any{"id": v.ID, "name": v.Name, "version": v.Version}
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	i.Spec.Dependencies = raw
	return nil
}

// usableVersion is a version workspace ws may use: its own, or
// the hub's.
func (s *Service) usableVersion(ctx context.Context, ws string, k Kind, id string) (platform.Integration, error) {
	i, err := s.definitions(k).get(ctx, id)
	if err == nil && i.WorkspaceID != ws && !i.InHub() {
		err = platform.ErrNotFound
	}
	return i, notFound(err, k.noun, id)
}
