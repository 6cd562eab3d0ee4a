// Package ops holds the flows that the CLI (cli) and the owner
// (tray) both run: opening a mission (with its packet, the packet's
// delivery and a follow-up link), init, the status view and the block
// view. Each flow is written once here, so a bad request is refused with
// the same *gates.Refusal — the same code, field and lesson — whichever
// surface it came through; the CLI prints the envelope with exit 3 and the
// tray answers it with its DESIGN §5 status.
//
// ops sits below cli and tray and above demo, laws, mailbox,
// memory, brain and chain; nothing below it imports it. It shapes no
// output: each surface prints or answers the values its flows return.
package ops
