-- A worker took a run with a turn: the company's next turn at the job follows on from it, and the frontier (the
-- latest turn's start a worker took) rises to it; a turn behind the frontier leaves it.
-- KEYS: taken (HASH company.job -> turn start ms), frontier.
-- ARGV: company.job, the turn's start in ms.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local at = tonumber(redis.call('GET', KEYS[2]))
if not at or tonumber(ARGV[2]) > at then redis.call('SET', KEYS[2], ARGV[2]) end
return 1
