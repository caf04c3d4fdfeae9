package sveltos

import (
	"encoding/base64"
	"math/rand"
	"os"
	"text/template"
	"time"

	"github.com/Masterminds/goutils"
	"github.com/google/uuid"
	"github.com/huandu/xstrings"
	"github.com/projectsveltos/libsveltos/lib/funcmap"
)

// baseFuncs returns libsveltos' own function map (sprig v3.3.0 plus Sveltos' YAML/JSON/TOML functions, as
// Sveltos builds it for a Profile without the text-template annotation) with every function that reads the
// process environment, DNS, the clock or a random source replaced by a pinned one from env and rng.
// Source: libsveltos lib/funcmap/funcmap.go (SveltosFuncMap); sprig functions.go (nonhermeticFunctions).
func baseFuncs(env Environment, rng *rand.Rand) template.FuncMap {
	fm := funcmap.SveltosFuncMap(false)
	pinEnvironment(fm, env)
	pinClock(fm, env.now())
	pinRandom(fm, rng)
	pinCrypto(fm, env.now(), rng)
	return fm
}

// pinEnvironment answers env, expandenv and getHostByName from env instead of the process and DNS.
func pinEnvironment(fm template.FuncMap, env Environment) {
	lookup := func(name string) string { return env.Vars[name] }
	fm["env"] = lookup
	fm["expandenv"] = func(s string) string { return os.Expand(s, lookup) }
	fm["getHostByName"] = func(name string) string { return env.Hosts[name] }
}

// pinClock makes now, ago and the date functions use now instead of the wall clock, and the "Local" zone UTC
// (the zone of the addon-controller container).
func pinClock(fm template.FuncMap, now time.Time) {
	fm["now"] = func() time.Time { return now }
	fm["ago"] = func(date any) string {
		t := now
		switch d := date.(type) {
		case time.Time:
			t = d
		case int64:
			t = time.Unix(d, 0)
		case int:
			t = time.Unix(int64(d), 0)
		}
		return now.Sub(t).Round(time.Second).String()
	}
	inZone := func(layout string, date any, zone string) string {
		return timeArg(date, now).In(location(zone)).Format(layout)
	}
	fm["date"] = func(layout string, date any) string { return inZone(layout, date, "UTC") }
	fm["dateInZone"] = inZone
	fm["date_in_zone"] = inZone
	fm["htmlDate"] = func(date any) string { return inZone("2006-01-02", date, "UTC") }
	fm["htmlDateInZone"] = func(date any, zone string) string { return inZone("2006-01-02", date, zone) }
	fm["toDate"] = func(layout, s string) time.Time {
		t, _ := time.ParseInLocation(layout, s, time.UTC)
		return t
	}
	fm["mustToDate"] = func(layout, s string) (time.Time, error) { return time.ParseInLocation(layout, s, time.UTC) }
}

// timeArg converts a date argument the way sprig's dateInZone does, with now for anything else.
func timeArg(date any, now time.Time) time.Time {
	switch d := date.(type) {
	case time.Time:
		return d
	case *time.Time:
		if d != nil {
			return *d
		}
	case int64:
		return time.Unix(d, 0)
	case int:
		return time.Unix(int64(d), 0)
	case int32:
		return time.Unix(int64(d), 0)
	}
	return now
}

// location loads a zone, "Local" and unknown zones being UTC.
func location(zone string) *time.Location {
	if zone == "Local" {
		return time.UTC
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return time.UTC
	}
	return loc
}

// pinRandom draws rand*, randInt, randBytes, shuffle and uuidv4 from rng, keeping sprig's alphabets.
func pinRandom(fm template.FuncMap, rng *rand.Rand) {
	str := func(start, end int, letters, numbers bool) func(int) string {
		return func(n int) string {
			s, _ := goutils.RandomSeed(n, start, end, letters, numbers, nil, rng)
			return s
		}
	}
	fm["randAlphaNum"] = str(0, 0, true, true)
	fm["randAlpha"] = str(0, 0, true, false)
	fm["randNumeric"] = str(0, 0, false, true)
	fm["randAscii"] = str(32, 127, false, false)
	fm["randInt"] = func(lo, hi int) int { return rng.Intn(hi-lo) + lo }
	fm["randBytes"] = func(n int) (string, error) {
		buf := make([]byte, n)
		if _, err := rng.Read(buf); err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(buf), nil
	}
	fm["shuffle"] = func(s string) string { return xstrings.ShuffleSource(s, rng) }
	fm["uuidv4"] = func() string {
		id, err := uuid.NewRandomFromReader(rng)
		if err != nil {
			return ""
		}
		return id.String()
	}
}
