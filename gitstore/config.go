package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// gitConfig holds the files git would read for `git config KEY`, most
// specific first (repository, then global). System config and include
// directives are not read: m1nd's own keys live in one of these two.
type gitConfig []*configFile

// ConfigValue returns the last value of section.key the way `git config
// section.key` would, reading the worktree's config.worktree (when
// extensions.worktreeConfig is on), the repository's config and then the
// user's global config. Section and key are case-insensitive, as in git.
// Per-worktree config is how two agents in two worktrees of one repository
// carry two identities (`git config --worktree m1nd.agent NAME`).
func (r *Repo) ConfigValue(section, key string) (string, bool) {
	cfgs, err := r.loadConfig()
	if err != nil {
		return "", false
	}
	return lastValue(cfgs, section, key)
}

// SharedConfigValue is ConfigValue without this worktree's own
// config.worktree: what every worktree that sets nothing of its own sees.
func (r *Repo) SharedConfigValue(section, key string) (string, bool) {
	cfgs, err := r.loadConfig()
	if err != nil {
		return "", false
	}
	if r.perWorktree {
		cfgs = cfgs[1:]
	}
	return lastValue(cfgs, section, key)
}

// ConfigTrue reports whether section.key is set to true the way git reads
// a boolean: written without a value, or true, yes, on or 1.
func (r *Repo) ConfigTrue(section, key string) bool {
	cfgs, err := r.loadConfig()
	if err != nil {
		return false
	}
	v, ok := lastVar(cfgs, section, key)
	return ok && v.isTrue()
}

func lastValue(cfgs gitConfig, section, key string) (string, bool) {
	v, ok := lastVar(cfgs, section, key)
	return v.value, ok
}

func lastVar(cfgs gitConfig, section, key string) (configVar, bool) {
	for _, c := range cfgs {
		if v, ok := c.lastVar(section, key); ok {
			return v, true
		}
	}
	return configVar{}, false
}

// ConfigErr reports a config file that exists but could not be parsed, so a
// caller can tell "unset" from "unreadable".
func (r *Repo) ConfigErr() error {
	_, err := r.loadConfig()
	return err
}

func (r *Repo) loadConfig() (gitConfig, error) {
	r.configOnce.Do(func() {
		for _, path := range r.configFiles() {
			c, err := readConfigFile(path)
			if err != nil {
				r.configErr = err
				continue
			}
			if c != nil {
				r.config = append(r.config, c)
			}
		}
		if len(r.config) > 0 && worktreeConfigOn(r.config[0]) {
			c, err := readConfigFile(filepath.Join(r.gitDir, "config.worktree"))
			if err != nil {
				r.configErr = err
			} else if c != nil {
				r.config = append(gitConfig{c}, r.config...)
				r.perWorktree = true
			}
		}
	})
	return r.config, r.configErr
}

func (r *Repo) configFiles() []string {
	files := []string{filepath.Join(r.commonDir, "config")}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		return append(files, g)
	}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"))
		if os.Getenv("XDG_CONFIG_HOME") == "" {
			files = append(files, filepath.Join(home, ".config", "git", "config"))
		}
	}
	return files
}

// maxConfigFile bounds a config file m1nd reads; git's own are a few KB.
const maxConfigFile = 16 << 20

func readConfigFile(path string) (*configFile, error) {
	data, err := ReadRegular(path, maxConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read git config %s: %w", path, err)
	}
	c, err := parseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("parse git config %s: %w", path, err)
	}
	return c, nil
}

// worktreeConfigOn reports whether c turns extensions.worktreeConfig on.
func worktreeConfigOn(c *configFile) bool {
	v, ok := c.lastVar("extensions", "worktreeconfig")
	return ok && v.isTrue()
}
