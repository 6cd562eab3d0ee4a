package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag is the hidden flag urfave/cli answers with the words that
// may follow: the shell scripts below call m1nd with it last.
const completionFlag = "--generate-bash-completion"

// bashCompletion asks m1nd itself what may follow the words typed so far.
// It needs no bash-completion package.
const bashCompletion = `# m1nd completion for bash: source <(m1nd completion bash)
_m1nd_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local -a words=("${COMP_WORDS[@]:0:COMP_CWORD}")
  if [[ "$cur" == -* ]]; then
    words+=("$cur")
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$("${words[@]}" ` + completionFlag + ` 2>/dev/null)" -- "$cur"))
}
complete -o bashdefault -o default -F _m1nd_complete m1nd
`

// zshCompletion is urfave/cli's zsh script (autocomplete/zsh_autocomplete)
// for m1nd.
const zshCompletion = `#compdef m1nd
# m1nd completion for zsh: source <(m1nd completion zsh)
_m1nd_complete() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} ` + completionFlag + ` 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ` + completionFlag + ` 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _m1nd_complete m1nd
`

// fishCompletion asks m1nd, like the bash script, what may follow.
const fishCompletion = `# m1nd completion for fish: m1nd completion fish | source
function __m1nd_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    if string match -q -- '-*' $cur
        set words $words $cur
    end
    $words ` + completionFlag + ` 2>/dev/null
end
complete -c m1nd -f -a '(__m1nd_complete)'
`

// completionScript is the completion script of a shell m1nd knows ("" for
// another).
func completionScript(shell string) string {
	switch shell {
	case "bash":
		return bashCompletion
	case "zsh":
		return zshCompletion
	case "fish":
		return fishCompletion
	}
	return ""
}

// completionOptions is what completion runs on.
type completionOptions struct {
	IO    *IOStreams
	Shell string // bash, zsh or fish (completionScript)
}

// newCompletionCmd parses completion; a test's runF sees the options
// instead of running it.
func newCompletionCmd(inv *Invocation, runF func(context.Context, *completionOptions) error) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script for bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Description: `Prints a script that completes m1nd's commands and flags; the script asks
m1nd itself (the hidden ` + completionFlag + ` flag), so it follows
the installed m1nd. Load it in the current shell, or in your shell's
startup file:

   source <(m1nd completion bash)     # ~/.bashrc
   source <(m1nd completion zsh)      # ~/.zshrc, after compinit
   m1nd completion fish | source      # ~/.config/fish/config.fish`,
		Action: func(c *cli.Context) error {
			shell, err := OneArg(c, "shell (bash, zsh or fish)")
			if err != nil {
				return err
			}
			if completionScript(shell) == "" {
				return Usagef("no completion for shell %q: use bash, zsh or fish", shell)
			}
			return RunWith(c.Context, &completionOptions{IO: inv.io, Shell: shell}, runF, runCompletion)
		},
	}
}

// runCompletion prints the shell's completion script.
func runCompletion(_ context.Context, opts *completionOptions) error {
	_, err := io.WriteString(opts.IO.Out, completionScript(opts.Shell))
	return err
}

// completing reports whether args ask for completions (urfave/cli wants
// the flag last, and hoistFlags must not move it).
func completing(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == completionFlag
}

// completeLeaf completes a verb's flags after a "-", and the ids its first
// argument names (MISSION_ID, LETTER_ID, MEMORY_ID, FOLLOWUP_ID, DOC_ID)
// before it is typed: the shell filters them by what is typed so far.
// Other arguments are the shell's to complete (files), so it offers no
// word of its own, not even the help subcommand urfave/cli gives every
// command.
func completeLeaf(inv *Invocation, cmd *cli.Command) cli.BashCompleteFunc {
	complete := cli.DefaultCompleteWithFlags(cmd)
	ids := inv.idsFor(cmd.ArgsUsage)
	return func(c *cli.Context) {
		// urfave/cli reads the word being completed from os.Args too.
		if n := len(os.Args); n > 2 && strings.HasPrefix(os.Args[n-2], "-") {
			complete(c)
			return
		}
		if ids == nil || c.NArg() > 0 {
			return
		}
		list, err := ids(c.Context)
		if err != nil {
			return // a shell completing gets nothing, never an error
		}
		for _, id := range list {
			fmt.Fprintln(c.App.Writer, id)
		}
	}
}

// idsFor lists the ids an argument usage's first word names, nil when it
// names none.
func (inv *Invocation) idsFor(argsUsage string) func(context.Context) ([]string, error) {
	first, _, _ := strings.Cut(argsUsage, " ")
	switch first {
	case "MISSION_ID":
		return inv.refIDs(missionKind)
	case "DOC_ID":
		return inv.refIDs(docKind)
	case "LETTER_ID":
		return inv.letterIDs
	case "MEMORY_ID":
		return inv.memoryIDs(false)
	case "FOLLOWUP_ID":
		return inv.memoryIDs(true)
	}
	return nil
}

// refIDs lists the ids of kind.
func (inv *Invocation) refIDs(k refKind) func(context.Context) ([]string, error) {
	return func(context.Context) ([]string, error) {
		repo, err := inv.OpenRepo()
		if err != nil {
			return nil, err
		}
		return idsUnder(repo, k.folder, k.valid)
	}
}
