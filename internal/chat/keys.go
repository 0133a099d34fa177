package chat

import (
	"crypto/subtle"
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// User keys are HS256 JWTs {id} signed with the bot's chat encryption key
// (compat-notes §1.3): the server signs them in createUser, and apps holding
// the key sign their own (Client.connect({userId, encryptionKey})).

// SignUserKey returns the user key for the user with foreign id fid, which
// expires at exp (zero: never).
func SignUserKey(secret []byte, fid string, exp time.Time) (string, error) {
	claims := jwt.MapClaims{"id": fid}
	if !exp.IsZero() {
		claims["exp"] = exp.Unix()
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}

// IsSecret tells whether s is the bot's secret, which the web chat sends
// as its admin secret (x-admin-secret) to act for any user.
func (b *Webhook) IsSecret(s string) bool {
	return s != "" && subtle.ConstantTimeCompare([]byte(s), b.Key) == 1
}

// VerifyUserKey checks a user key and returns the id it names.
func VerifyUserKey(secret []byte, key string) (string, error) {
	tok, err := jwt.Parse(key, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{"HS256"}))
	if err != nil {
		return "", err
	}
	id, ok := keyID(tok)
	if !ok {
		return "", errors.New("the key has no id")
	}
	return id, nil
}

// keyID is the id a parsed user key names (false: none).
func keyID(tok *jwt.Token) (string, bool) {
	claims, _ := tok.Claims.(jwt.MapClaims)
	id, ok := claims["id"].(string)
	return id, ok && id != ""
}

// UserKeyID reads the id a user key names without verifying it (false when
// it is no JWT with an id): the caller looks up what the key would let in
// and verifies the key before using any of it.
func UserKeyID(key string) (string, bool) {
	tok, _, err := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"})).ParseUnverified(key, jwt.MapClaims{})
	if err != nil {
		return "", false
	}
	return keyID(tok)
}
