package source

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// redacted replaces every secret Redact removes.
const redacted = "REDACTED"

// secretParamWords are the fragments that make a query parameter's name
// credential-like: presigned S3 URLs (X-Amz-Signature, X-Amz-Credential,
// X-Amz-Security-Token), Azure SAS (sig), API keys and tokens of every
// spelling (access_key, apiKey, auth_token), passwords.
var secretParamWords = []string{"secret", "token", "passw", "pwd", "key", "sig", "credential", "auth", "session"}

// secretParam reports whether a query parameter of this name may carry a
// credential. Matching is by fragment, case-insensitive, so a spelling not
// seen before is still caught; a harmless parameter redacted by mistake
// costs only some detail in a message.
func secretParam(name string) bool {
	n := strings.ToLower(name)
	if n == "pass" {
		return true
	}
	for _, w := range secretParamWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Redact returns u as text fit for errors, logs, listings and metrics: a
// password becomes REDACTED (the user name stays, to say which account), a
// user name given alone becomes REDACTED (that is where tokens go, as in
// https://TOKEN@host), so do the values of credential-like query parameters, and a URL nested in
// a query value (s3's endpoint=) is redacted the same way. Every other part
// keeps its order and spelling, and redacting twice changes nothing.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if c.User != nil {
		if _, hasPassword := c.User.Password(); hasPassword {
			c.User = url.UserPassword(c.User.Username(), redacted)
		} else {
			c.User = url.User(redacted)
		}
	}
	c.RawQuery = redactQuery(c.RawQuery)
	if c.Fragment != "" {
		c.Fragment, c.RawFragment = RedactText(c.Fragment), ""
	}
	return c.String()
}

// redactQuery redacts a raw query string parameter by parameter.
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if secretParam(name) {
			parts[i] = k + "=" + redacted
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			val = v
		}
		if strings.Contains(val, "://") || strings.Contains(val, "@") {
			parts[i] = k + "=" + url.QueryEscape(RedactText(val))
		}
	}
	return strings.Join(parts, "&")
}

// RedactURL is Redact for a location as the user typed it. A plain path
// (no "://") comes back unchanged; text that does not parse as a URL is
// redacted by pattern (see RedactText), so even a malformed URL is safe to
// print.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return redactLoose(raw)
	}
	return Redact(u)
}

// The patterns are compiled on first use, not at start-up: most processes
// never redact free text.
var (
	// urlInText finds URL-like words in free text.
	urlInText = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>` + "`" + `]+`)
	})
	// looseUserinfo is userinfo after "//" in text that did not parse.
	looseUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`//[^/?#@\s"']*@`) })
	// looseParam is a key=value pair whose key looks like a credential.
	looseParam = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&;\s]|^)([a-z0-9_.\-]*(?:secret|token|passw|pwd|key|sig|credential|auth|session)[a-z0-9_.\-]*=)[^&#\s"']*`)
	})
)

// RedactText redacts every URL found in free text, such as an error message
// from a library that quotes the URL it was asked for.
func RedactText(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") {
		return s
	}
	s = urlInText().ReplaceAllStringFunc(s, RedactURL)
	// Userinfo only appears after a scheme, which the URLs above covered
	// (a user name kept beside a dropped password must stay); credential
	// parameters may also appear loose, as key=value.
	return looseParam().ReplaceAllString(s, "${1}${2}"+redacted)
}

// redactLoose masks userinfo and credential-like parameters by pattern.
func redactLoose(s string) string {
	s = looseUserinfo().ReplaceAllString(s, "//"+redacted+"@")
	return looseParam().ReplaceAllString(s, "${1}${2}"+redacted)
}
