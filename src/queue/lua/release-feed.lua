-- A feed's runs are on BullMQ's wait list: the next feed may give runs out (feed.lua).
-- KEYS: feeding. ARGV: the feed's token.
-- Returns 1 when it released the feed, 0 when `feeding` had expired or is another feed's.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
