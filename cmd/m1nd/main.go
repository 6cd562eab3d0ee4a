// Command m1nd gives coding agents shared memory and context stored in git
// refs. This is the small m1nd that agents and git start at every event:
// it runs the hot verbs itself and hands every other one to m1nd-full
// (cli.Front).
package main

import "github.com/m1nd/m1nd/cli"

func main() { cli.ProcessFront() }
