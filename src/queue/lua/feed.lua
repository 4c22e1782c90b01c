-- Gives out up to `free` queued runs, lowest order first, after moving the held runs whose time has come into `due`.
-- Each run given out leaves `due`, `runs` and `queued` and is marked `fed` until BullMQ is done with it (finish.lua).
-- One feed at a time: the feed that gives runs out holds `feeding` until they are on BullMQ's wait list
-- (release-feed.lua), so that a later feed's runs, in a worker that reached BullMQ first, are not taken before them.
-- KEYS: due, runs, later, fed, queued (as in queue-run.lua), feeding.
-- ARGV: free, now in ms, this feed's token, how long `feeding` is held at most in ms.
-- Returns the entries given out, in order; nil while another feed holds `feeding`.
local due, runs, later, fed, queued, feeding = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local free, now, token, holdMs = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]

if not redis.call('SET', feeding, token, 'NX', 'PX', holdMs) then return false end

for _, member in ipairs(redis.call('ZRANGEBYSCORE', later, '-inf', now)) do
  redis.call('ZREM', later, member)
  local entry = redis.call('HGET', runs, member)
  if entry then redis.call('ZADD', due, cjson.decode(entry)['order'], member) end
end

local out = {}
while #out < free do
  local head = redis.call('ZPOPMIN', due)
  if #head == 0 then break end
  local member = head[1]
  local entry = redis.call('HGET', runs, member)
  -- A member already fed keeps its entry as the run to follow it (finish.lua puts it back).
  if entry and redis.call('HEXISTS', fed, member) == 0 then
    redis.call('HDEL', runs, member)
    redis.call('ZREM', queued, member)
    redis.call('HSET', fed, member, entry)
    out[#out + 1] = entry
  end
end
if #out == 0 then redis.call('DEL', feeding) end
return out
