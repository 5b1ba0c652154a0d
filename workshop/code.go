package workshop

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// Code is a room's join code, such as KQ7-M4P: six characters from an
// alphabet without look-alikes (no 0/O, 1/I/L, 2/Z, 5/S, 8/B, U/V), shown in
// two groups of three.
type Code string

// codeAlphabet is the characters a code is made of. 23 symbols, so a code is
// one of 23^6 ≈ 148 million; with joins rate-limited per client, guessing a
// live room is hopeless.
const codeAlphabet = "ACDEFGHJKMNPQRTWXY34679"

const codeLen = 6

// NewCode draws a random code.
func NewCode() Code {
	out := make([]byte, 0, codeLen+1)
	var b [1]byte
	for len(out) < codeLen+1 {
		if len(out) == 3 {
			out = append(out, '-')
		}
		rand.Read(b[:]) // never fails (crypto/rand's documented contract)
		// Reject the top of the byte range so every symbol is equally likely.
		if int(b[0]) >= 256/len(codeAlphabet)*len(codeAlphabet) {
			continue
		}
		out = append(out, codeAlphabet[int(b[0])%len(codeAlphabet)])
	}
	return Code(out)
}

// ParseCode reads a code as a person types it: any case, with or without
// the dash, spaces ignored. Characters that
// look alike are not in the alphabet and are refused, naming the character.
func ParseCode(text string) (Code, error) {
	var b strings.Builder
	for _, r := range strings.ToUpper(text) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case strings.ContainsRune(codeAlphabet, r):
			if b.Len() >= codeLen {
				return "", inputErrorf("code", "a join code has %d characters, such as KQ7-M4P; this one has more", codeLen)
			}
			b.WriteRune(r)
		default:
			return "", inputErrorf("code", "%q is not in any join code; codes use only %s, such as KQ7-M4P", r, codeAlphabet)
		}
	}
	s := b.String()
	if len(s) != codeLen {
		return "", inputErrorf("code", "a join code has %d characters, such as KQ7-M4P; this one has %d", codeLen, len(s))
	}
	return Code(s[:3] + "-" + s[3:]), nil
}

// Token is a learner's resume secret: 128 random bits in base32.
type Token string

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewToken draws a random token.
func NewToken() Token {
	var b [16]byte
	rand.Read(b[:])
	return Token(strings.ToLower(tokenEncoding.EncodeToString(b[:])))
}

// ParseToken checks the shape of a token taken from a cookie or a URL.
func ParseToken(text string) (Token, error) {
	if len(text) != 26 {
		return "", inputErrorf("token", "a resume token has 26 characters; this one has %d", len(text))
	}
	if _, err := tokenEncoding.DecodeString(strings.ToUpper(text)); err != nil {
		return "", inputErrorf("token", "not a resume token (letters a-z and digits 2-7 only)")
	}
	return Token(strings.ToLower(text)), nil
}
