-- expect comments read as SQL comments.
SELECT 1;
-- expect rows: 1
