package rules

import "time"

// MaxClockSkew is how far ahead of the writer's clock a document may be
// dated: machines disagree by seconds, not by days.
const MaxClockSkew = 24 * time.Hour

// gitEpoch is the earliest date git writes and reads back: git fsck calls
// an older commit date an overflow (badDateOverflow), and a remote with
// receive.fsckObjects refuses such a commit for ever.
var gitEpoch = time.Unix(0, 0).UTC()

// ValidDocTime reports whether value is an RFC 3339 timestamp that can date
// a git commit (1970 or later). Documents date the commits that hold them,
// so one git cannot date would poison every clone.
func ValidDocTime(value string) bool {
	t, err := time.Parse(time.RFC3339, value)
	return err == nil && !t.Before(gitEpoch)
}

// CheckCommitDate is the writer's check of a document's date before a
// commit is written: 1970 or later, and no more than MaxClockSkew ahead of
// now.
func CheckCommitDate(when, now time.Time) error {
	if when.Before(gitEpoch) {
		return Refusef(InvalidLetter, "date", "the document is dated %s, before 1970: git cannot date a commit then (git fsck calls it an overflow and a checking remote refuses it)", when.UTC().Format(time.RFC3339))
	}
	if ahead := when.Sub(now); ahead > MaxClockSkew {
		return Refusef(InvalidLetter, "date", "the document is dated %s, %s ahead of this machine's clock: date it when it is written", when.UTC().Format(time.RFC3339), Count(int(ahead.Round(time.Hour)/time.Hour), "hour"))
	}
	return nil
}
