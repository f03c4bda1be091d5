"""The Lua scripts `RedisStorage` runs: each one is atomic on the server.

Layout of one session (all keys share the hash tag `{<user_id>}`, so a user's sessions
and their index live in one cluster slot):

- `<prefix>:{<user>}:<agent>:<session>`       hash: version, state (head JSON), n,
  created_at, updated_at, metadata, write_id, fence (the largest fencing token seen)
- `<prefix>:{<user>}:<agent>:<session>:msgs`  list: one JSON body per message
- `<prefix>:{<user>}:sessions`                set: `<agent>:<session>` members

`write_id` makes a write idempotent: a client that lost the connection after sending
a script may send it again, and the second run sees its own id and changes nothing.

A script that fails half-way keeps what it wrote (Redis does not roll back), so every
script checks the types of the keys it writes before its first write.
"""

from __future__ import annotations

__all__ = ["APPLY", "DELETE", "FENCE", "FETCH", "PRUNE", "UPSERT"]

# An error reply naming `key` if it exists with another type than `want`, else false.
_CHECK = """
local function wrong_type(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want)
  end
  return false
end
"""

# Returns {} when missing, else {version, state, n, created_at, updated_at, metadata, bodies...}.
_READ = """
local function read_session(head, msgs)
  local h = redis.call('HMGET', head, 'version', 'state', 'n', 'created_at', 'updated_at',
                       'metadata')
  if not h[1] then return {} end
  local out = {h[1], h[2], h[3], h[4], h[5], h[6]}
  local bodies = redis.call('LRANGE', msgs, 0, -1)
  for i = 1, #bodies do out[#out + 1] = bodies[i] end
  return out
end

local function push_all(msgs, first, last)
  local i = first
  while i <= last do
    local j = math.min(i + 999, last)
    redis.call('RPUSH', msgs, unpack(ARGV, i, j))
    i = j + 1
  end
end

local function expire_all(ttl)
  if ttl > 0 then
    for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end
  end
end
"""

FETCH = (
    _READ
    + """
return read_session(KEYS[1], KEYS[2])
"""
)

# KEYS: head, msgs, index
# ARGV: write_id, expected_version, state, base_count, count, updated_at, ttl, nchanged,
#       created_at, fence ('' for none), (position, body) * nchanged, appended bodies...
# Returns {new_version}, {-1} missing, {-2, version} stale, {-3, n} log length mismatch,
# {-4} created at another time (deleted and created again), {-5, fence} fenced out.
APPLY = (
    _READ
    + """
local cur = redis.call('HMGET', KEYS[1], 'version', 'write_id', 'n', 'created_at', 'fence')
if not cur[1] then return {-1} end
if cur[2] == ARGV[1] then return {tonumber(cur[1])} end
local fence = tonumber(cur[5] or '0')
if ARGV[10] ~= '' and fence > tonumber(ARGV[10]) then return {-5, fence} end
if tonumber(cur[1]) ~= tonumber(ARGV[2]) then return {-2, tonumber(cur[1])} end
if cur[4] ~= ARGV[9] then return {-4} end
local base, count = tonumber(ARGV[4]), tonumber(ARGV[5])
if tonumber(cur[3]) ~= base or redis.call('LLEN', KEYS[2]) ~= base then
  return {-3, redis.call('LLEN', KEYS[2])}
end
if count == 0 then
  redis.call('DEL', KEYS[2])
elseif count < base then
  redis.call('LTRIM', KEYS[2], 0, count - 1)
end
local len = math.min(base, count)
local i = 11
for _ = 1, tonumber(ARGV[8]) do
  local pos = tonumber(ARGV[i])
  if pos >= len / 2 then pos = pos - len end
  redis.call('LSET', KEYS[2], pos, ARGV[i + 1])
  i = i + 2
end
push_all(KEYS[2], i, #ARGV)
local version = tonumber(cur[1]) + 1
redis.call('HSET', KEYS[1], 'version', version, 'state', ARGV[3], 'n', count,
           'updated_at', ARGV[6], 'write_id', ARGV[1])
if ARGV[10] ~= '' and tonumber(ARGV[10]) > fence then
  redis.call('HSET', KEYS[1], 'fence', ARGV[10])
end
expire_all(tonumber(ARGV[7]))
return {version}
"""
)

# KEYS: head; ARGV: token. Returns {version, created_at}, {-1} missing, {-5, fence} already
# fenced with a larger token.
FENCE = """
local cur = redis.call('HMGET', KEYS[1], 'version', 'fence', 'created_at')
if not cur[1] then return {-1} end
local fence = tonumber(cur[2] or '0')
if fence > tonumber(ARGV[1]) then return {-5, fence} end
redis.call('HSET', KEYS[1], 'fence', ARGV[1])
return {tonumber(cur[1]), cur[3]}
"""

# KEYS: head, msgs, index
# ARGV: write_id, replace ('1'/'0'), state, now, ttl, metadata ('' keeps), member, bodies...
# Returns the session as FETCH does.
UPSERT = (
    _CHECK
    + _READ
    + """
local bad = wrong_type(KEYS[1], 'hash') or wrong_type(KEYS[2], 'list')
            or wrong_type(KEYS[3], 'set')
if bad then return bad end
local cur = redis.call('HMGET', KEYS[1], 'version', 'write_id')
local nbodies = #ARGV - 7
if not cur[1] then
  redis.call('DEL', KEYS[2])
  local meta = ARGV[6]
  if meta == '' then meta = '{}' end
  redis.call('HSET', KEYS[1], 'version', 1, 'state', ARGV[3], 'n', nbodies,
             'created_at', ARGV[4], 'updated_at', ARGV[4], 'metadata', meta,
             'write_id', ARGV[1])
  push_all(KEYS[2], 8, #ARGV)
elseif cur[2] ~= ARGV[1] then
  if ARGV[2] == '1' then
    redis.call('DEL', KEYS[2])
    push_all(KEYS[2], 8, #ARGV)
    redis.call('HSET', KEYS[1], 'version', tonumber(cur[1]) + 1, 'state', ARGV[3],
               'n', nbodies, 'updated_at', ARGV[4], 'write_id', ARGV[1])
  end
  if ARGV[6] ~= '' then
    redis.call('HSET', KEYS[1], 'metadata', ARGV[6], 'updated_at', ARGV[4])
  end
end
redis.call('SADD', KEYS[3], ARGV[7])
expire_all(tonumber(ARGV[5]))
return read_session(KEYS[1], KEYS[2])
"""
)

# KEYS: head, msgs, index; ARGV: member. Returns 1 if the session existed.
DELETE = (
    _CHECK
    + """
local bad = wrong_type(KEYS[3], 'set')
if bad then return bad end
local existed = redis.call('EXISTS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return existed
"""
)

# KEYS: index, heads...; ARGV: the index members of those heads, in the same order.
# Drops the members whose head is gone (expired or deleted) *now*, so a session created
# again since `list_sessions` read the heads keeps its entry. Returns how many it dropped.
PRUNE = """
local dropped = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then
    dropped = dropped + redis.call('SREM', KEYS[1], ARGV[i])
  end
end
return dropped
"""
