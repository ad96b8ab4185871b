-- @dialect bad name!
-- @schema-version 99999999999
-- @statement nosuch
-- @define toolongnametoolongnametoolongname1 x
-- @wake-file extra
SELECT 'unterminated ;
