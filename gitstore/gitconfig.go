package gitstore

import (
	"bytes"
	"fmt"
	"strings"
)

// configFile is one git config file as git reads it: its variables in
// file order.
type configFile struct {
	vars []configVar
}

// configVar is one variable of a config file, named as git names it: base
// is the section in lower case, then for a subsection a dot and the
// subsection (`[section "Sub"]` keeps its case, the old `[section.Sub]`
// does not); key is in lower case. A variable written without `=` has
// the empty value, as `git config --get` prints it.
type configVar struct {
	base, key, value string
	noValue          bool // written without =: a true boolean
}

// isTrue is v read as git reads a boolean true: no value, or true, yes,
// on or 1.
func (v configVar) isTrue() bool {
	switch strings.ToLower(v.value) {
	case "true", "yes", "on", "1":
		return true
	}
	return v.noValue
}

// lastVar is what `git config --get section.key` reads in this file
// alone: the last setting of key in a section named section with no
// subsection.
func (f *configFile) lastVar(section, key string) (configVar, bool) {
	section, key = strings.ToLower(section), strings.ToLower(key)
	for i := len(f.vars) - 1; i >= 0; i-- {
		if v := f.vars[i]; v.base == section && v.key == key {
			return v, true
		}
	}
	return configVar{}, false
}

// parseConfig reads a git config file exactly as git 2.39 does
// (config.c's git_parse_source, ported): `#` and `;` comments, the
// `[section]`, `[section "sub"]` and `[section.sub]` headers, variables
// after a header on its line, values trimmed and their blanks squeezed
// outside double quotes, the escapes \n \t \b \\ \" and a backslash
// ending a line joining the next. Any other line refuses the whole file,
// with its number, as git does. Include directives are not followed
// (m1nd's keys live in the files it reads).
func parseConfig(data []byte) (*configFile, error) {
	p := &configParser{src: data, line: 1}
	if len(data) >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf {
		p.pos = 3
	}
	f := &configFile{}
	var base string
	comment := false
	for {
		c := p.next()
		switch {
		case c == '\n':
			if p.eof {
				return f, nil
			}
			comment = false
		case comment || isConfigSpace(c):
		case c == '#' || c == ';':
			comment = true
		case c == '[':
			b, err := p.header()
			if err != nil {
				return nil, err
			}
			base = b
		case isConfigAlpha(c):
			v, err := p.variable(c)
			if err != nil {
				return nil, err
			}
			v.base = base
			f.vars = append(f.vars, v)
		default:
			return nil, p.errorf()
		}
	}
}

// configParser reads a config file a character at a time as git's
// get_next_char does: "\r\n" is a new line, and the end of the file reads
// as one more new line with eof set.
type configParser struct {
	src       []byte
	pos, line int
	eof       bool
}

func (p *configParser) next() byte {
	if p.pos >= len(p.src) {
		p.line++ // git counts every read of the end as a line
		p.eof = true
		return '\n'
	}
	c := p.src[p.pos]
	p.pos++
	if c == '\r' && p.pos < len(p.src) && p.src[p.pos] == '\n' {
		c = '\n'
		p.pos++
	}
	if c == '\n' {
		p.line++
	}
	return c
}

// errorf is git's refusal, naming the line git names.
func (p *configParser) errorf() error {
	return fmt.Errorf("bad config line %d", p.line)
}

// errorBack is git's refusal of a line the new line just read ended.
func (p *configParser) errorBack() error {
	return fmt.Errorf("bad config line %d", p.line-1)
}

// header reads the rest of `[section]` or `[section "sub"]` and returns
// the base name of its variables.
func (p *configParser) header() (string, error) {
	var name strings.Builder
	for {
		c := p.next()
		switch {
		case p.eof:
			return "", p.errorf()
		case c == ']':
			if name.Len() == 0 {
				return "", p.errorf()
			}
			return name.String(), nil
		case isConfigSpace(c):
			return p.subsection(&name, c)
		case !isConfigKeyChar(c) && c != '.':
			return "", p.errorf()
		}
		name.WriteByte(toLowerASCII(c))
	}
}

// subsection reads ` "sub"]` after a section's name.
func (p *configParser) subsection(name *strings.Builder, c byte) (string, error) {
	for isConfigSpace(c) {
		if c == '\n' {
			return "", p.errorBack()
		}
		c = p.next()
	}
	if c != '"' {
		return "", p.errorf()
	}
	name.WriteByte('.')
	for {
		c := p.next()
		if c == '\n' {
			return "", p.errorBack()
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return "", p.errorBack()
			}
		}
		name.WriteByte(c)
	}
	if p.next() != ']' {
		return "", p.errorf()
	}
	return name.String(), nil
}

// variable reads a variable whose name starts with first.
func (p *configParser) variable(first byte) (configVar, error) {
	key := []byte{toLowerASCII(first)}
	var c byte
	for {
		c = p.next()
		if p.eof || !isConfigKeyChar(c) {
			break
		}
		key = append(key, toLowerASCII(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	v := configVar{key: string(key)}
	if c == '\n' {
		v.noValue = true
		return v, nil
	}
	if c != '=' {
		return configVar{}, p.errorf()
	}
	value, err := p.value()
	v.value = value
	return v, err
}

// value reads a value up to the end of its line (git's parse_value).
func (p *configParser) value() (string, error) {
	var b []byte
	quoted, comment, spaces := false, false, 0
	for {
		c := p.next()
		if c == '\n' {
			if quoted {
				return "", p.errorBack()
			}
			if i := bytes.IndexByte(b, 0); i >= 0 {
				b = b[:i] // git's value is a C string
			}
			return string(b), nil
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quoted {
			if len(b) > 0 {
				spaces++
			}
			continue
		}
		if !quoted && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			b = append(b, ' ')
		}
		switch c {
		case '\\':
			switch c = p.next(); c {
			case '\n':
				continue // the value goes on on the next line
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", p.errorf()
			}
		case '"':
			quoted = !quoted
			continue
		}
		b = append(b, c)
	}
}

// isConfigSpace is git's own isspace (git-compat-util.h): a space, a
// tab, a new line or a carriage return, never \v or \f.
func isConfigSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isConfigAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isConfigKeyChar is git's iskeychar: a letter, a digit or a dash.
func isConfigKeyChar(c byte) bool { return isConfigAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func toLowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
