"""DuckDB's and chDB's functions, each on one of two lists: allowed to an agent, or refused.

The lists are :class:`~batchgate_gym.kernel.engine_functions.FunctionLists`, as SQLite's
are: a store allows only what is on its allow-list, and a test reads each engine's own
catalogue (``duckdb_functions()``, chDB's ``system.functions``) and fails on any function
on neither list, so an engine upgrade's new functions are refused until someone sorts them
here. The allow-lists are the functions that compute on values (arithmetic, text, dates,
lists, JSON, aggregates and windows, and the operators the parser turns into functions);
the refusals say why.

chDB's lists hold canonical names only: its query tree names a function canonically (an
alias as the function it stands for), and an aggregate with combinators (``sumIf``) by
the aggregate it combines (:func:`chdb_aggregate`).
"""

from __future__ import annotations

from batchgate_gym.kernel.engine_functions import FunctionLists, names

# Operators DuckDB's parser writes as a function whose name holds spaces.
_SPACED_OPERATORS = frozenset({"is distinct from", "is not distinct from"})

DUCKDB = FunctionLists(
    "DuckDB",
    allowed=names(
        """
        != !__postfix !~~ !~~* % & && * ** + - ->> / // < <-> << <= <=> <@ = > >= >> @ @> ^ ^@
        __between __cast abs acos acosh add age aggregate ago alias any_value apply
        approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null
        arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg
        array_aggr array_aggregate array_append array_apply array_cat array_concat array_contains
        array_cosine_distance array_cosine_similarity array_cross_product array_distance
        array_distinct array_dot_product array_extract array_filter array_grade_up array_has
        array_has_all array_has_any array_indexof array_inner_product array_intersect array_length
        array_negative_dot_product array_negative_inner_product array_pop_back array_pop_front
        array_position array_prepend array_push_back array_push_front array_reduce array_reverse
        array_reverse_sort array_select array_slice array_sort array_to_json array_to_string
        array_to_string_comma_default array_transform array_unique array_value array_where array_zip
        ascii asin asinh assert_true atan atan2 atanh avg base64 bin binom bit_and bit_count
        bit_length bit_or bit_position bit_xor bitstring bitstring_agg bitstring_byte_comparable
        bool_and bool_or can_cast_implicitly cardinality cast_to_type cbrt ceil ceiling century
        char_length character_length chr collate_aa collate_af collate_am collate_ar collate_ar_sa
        collate_as collate_az collate_bal collate_be collate_bg collate_blo collate_bn collate_bo
        collate_br collate_bs collate_ca collate_ceb collate_chr collate_cs collate_cu collate_cy
        collate_da collate_de collate_de_at collate_dsb collate_dz collate_ee collate_el collate_en
        collate_en_us collate_eo collate_es collate_et collate_fa collate_fa_af collate_ff
        collate_fi collate_fil collate_fo collate_fr collate_fr_ca collate_fy collate_ga collate_gl
        collate_gu collate_ha collate_haw collate_he collate_he_il collate_hi collate_hr collate_hsb
        collate_hu collate_hy collate_id collate_id_id collate_ig collate_is collate_it collate_ja
        collate_ka collate_kk collate_kl collate_km collate_kn collate_ko collate_kok collate_ku
        collate_ky collate_lb collate_lij collate_lkt collate_ln collate_lo collate_lt collate_lv
        collate_mk collate_ml collate_mn collate_mr collate_ms collate_mt collate_my collate_nb
        collate_nb_no collate_ne collate_nl collate_nn collate_no collate_noaccent collate_nso
        collate_om collate_or collate_pa collate_pa_in collate_pl collate_ps collate_pt collate_ro
        collate_ru collate_sa collate_se collate_sgs collate_si collate_sk collate_sl collate_smn
        collate_sq collate_sr collate_sr_ba collate_sr_me collate_sr_rs collate_ssy collate_st
        collate_sv collate_sw collate_ta collate_te collate_th collate_tk collate_tn collate_to
        collate_tr collate_ug collate_uk collate_ur collate_uz collate_vi collate_vo collate_wae
        collate_wo collate_xh collate_yi collate_yo collate_zh collate_zh_cn collate_zh_hk
        collate_zh_mo collate_zh_sg collate_zh_tw collate_zu combine combine_aggr concat concat_ws
        constant_or_null contains corr cos cosh cot count count_if count_star countif covar_pop
        covar_samp create_sort_key cume_dist damerau_levenshtein date_add date_diff date_part
        date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth dayofweek
        dayofyear days_in_month decade decimal_average decimal_division decode degrees dense_rank
        divide editdist3 element_at encode ends_with entropy enum_code enum_first enum_last
        enum_range enum_range_boundary epoch epoch_ms epoch_ns epoch_us equi_width_bins era error
        even exp factorial favg fdiv fill filter finalize first first_value flatten floor fmod
        format_bytes formatreadabledecimalsize formatreadablesize from_base64 from_binary from_hex
        from_json from_json_strict fsum gamma gcd generate_subscripts geomean geometric_mean get_bit
        get_block_size get_type grade_up greatest greatest_common_divisor group_concat hamming hash
        hex histogram histogram_exact hive_partition_component hour icu_collate_aa icu_collate_af
        icu_collate_am icu_collate_ar icu_collate_ar_sa icu_collate_as icu_collate_az
        icu_collate_bal icu_collate_be icu_collate_bg icu_collate_blo icu_collate_bn icu_collate_bo
        icu_collate_br icu_collate_bs icu_collate_ca icu_collate_ceb icu_collate_chr icu_collate_cs
        icu_collate_cu icu_collate_cy icu_collate_da icu_collate_de icu_collate_de_at
        icu_collate_dsb icu_collate_dz icu_collate_ee icu_collate_el icu_collate_en
        icu_collate_en_us icu_collate_eo icu_collate_es icu_collate_et icu_collate_fa
        icu_collate_fa_af icu_collate_ff icu_collate_fi icu_collate_fil icu_collate_fo
        icu_collate_fr icu_collate_fr_ca icu_collate_fy icu_collate_ga icu_collate_gl icu_collate_gu
        icu_collate_ha icu_collate_haw icu_collate_he icu_collate_he_il icu_collate_hi
        icu_collate_hr icu_collate_hsb icu_collate_hu icu_collate_hy icu_collate_id
        icu_collate_id_id icu_collate_ig icu_collate_is icu_collate_it icu_collate_ja icu_collate_ka
        icu_collate_kk icu_collate_kl icu_collate_km icu_collate_kn icu_collate_ko icu_collate_kok
        icu_collate_ku icu_collate_ky icu_collate_lb icu_collate_lij icu_collate_lkt icu_collate_ln
        icu_collate_lo icu_collate_lt icu_collate_lv icu_collate_mk icu_collate_ml icu_collate_mn
        icu_collate_mr icu_collate_ms icu_collate_mt icu_collate_my icu_collate_nb icu_collate_nb_no
        icu_collate_ne icu_collate_nl icu_collate_nn icu_collate_no icu_collate_noaccent
        icu_collate_nso icu_collate_om icu_collate_or icu_collate_pa icu_collate_pa_in
        icu_collate_pl icu_collate_ps icu_collate_pt icu_collate_ro icu_collate_ru icu_collate_sa
        icu_collate_se icu_collate_sgs icu_collate_si icu_collate_sk icu_collate_sl icu_collate_smn
        icu_collate_sq icu_collate_sr icu_collate_sr_ba icu_collate_sr_me icu_collate_sr_rs
        icu_collate_ssy icu_collate_st icu_collate_sv icu_collate_sw icu_collate_ta icu_collate_te
        icu_collate_th icu_collate_tk icu_collate_tn icu_collate_to icu_collate_tr icu_collate_ug
        icu_collate_uk icu_collate_ur icu_collate_uz icu_collate_vi icu_collate_vo icu_collate_wae
        icu_collate_wo icu_collate_xh icu_collate_yi icu_collate_yo icu_collate_zh icu_collate_zh_cn
        icu_collate_zh_hk icu_collate_zh_mo icu_collate_zh_sg icu_collate_zh_tw icu_collate_zu
        icu_sort_key if ilike_escape index_key instr invoke is_histogram_other_bin isfinite isinf
        isnan isodow isoyear jaccard jaro_similarity jaro_winkler_similarity json json_array
        json_array_length json_contains json_copy_strftime_if_date json_copy_strftime_if_timestamp
        json_deep_merge json_each json_exists json_extract json_extract_path json_extract_path_text
        json_extract_string json_group_array json_group_object json_group_structure json_insert
        json_keys json_merge_patch json_merge_patch_diff json_normalize json_object json_pretty
        json_quote json_remove json_replace json_set json_strip_nulls json_structure json_transform
        json_transform_strict json_tree json_type json_valid json_value julian kahan_sum kurtosis
        kurtosis_pop lag last last_day last_value lcase lcm lead least least_common_multiple left
        left_grapheme len length length_grapheme levenshtein lgamma like_escape list list_aggr
        list_aggregate list_any_value list_append list_apply list_approx_count_distinct list_avg
        list_bit_and list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat
        list_contains list_cosine_distance list_cosine_similarity list_count list_distance
        list_distinct list_dot_product list_element list_entropy list_extract list_filter list_first
        list_grade_up list_has list_has_all list_has_any list_histogram list_indexof
        list_inner_product list_intersect list_kurtosis list_kurtosis_pop list_last list_mad
        list_max list_median list_min list_mode list_negative_dot_product
        list_negative_inner_product list_pack list_position list_prepend list_product list_reduce
        list_reverse list_reverse_sort list_select list_sem list_skewness list_slice list_sort
        list_stddev_pop list_stddev_samp list_string_agg list_sum list_transform list_unique
        list_value list_var_pop list_var_samp list_where list_zip listagg ln log log10 log2 lower
        ltrim lttb mad make_date make_time make_timestamp make_timestamp_ms make_timestamp_ns
        make_timestamptz make_type map map_concat map_contains map_contains_entry map_contains_value
        map_entries map_extract map_extract_value map_from_entries map_keys map_values max max_by
        md5 md5_number md5_number_lower md5_number_upper mean median microsecond millennium
        millisecond min min_by minute mismatches mod mode month monthname multiply nanosecond
        nextafter nfc_normalize normalized_interval not_ilike_escape not_like_escape nth_value ntile
        nullif octet_length ord overlay parse_dirname parse_dirpath parse_filename
        parse_formatted_bytes parse_path path_join percent_rank pi position pow power prefix product
        quantile quantile_cont quantile_disc quarter radians rank rank_dense reduce regexp_escape
        regexp_extract regexp_extract_all regexp_full_match regexp_matches regexp_replace
        regexp_split_to_array regexp_split_to_table regr_avgx regr_avgy regr_count regr_intercept
        regr_r2 regr_slope regr_sxx regr_sxy regr_syy remap_struct replace replace_type
        reservoir_quantile reverse right right_grapheme round round_even roundbankers row row_number
        row_to_json rtrim second sem set_bit sha1 sha256 sign signbit sin sinh skewness split
        split_part sqrt st_asbinary st_asgeojson st_astext st_aswkb st_aswkt st_crs
        st_geomfromgeojson st_geomfromwkb st_intersects_extent st_setcrs starts_with stddev
        stddev_pop stddev_samp str_split str_split_regex strftime string_agg string_split
        string_split_regex string_to_array strip_accents strlen strpos strptime struct_concat
        struct_contains struct_extract struct_extract_at struct_has struct_indexof struct_insert
        struct_keys struct_pack struct_position struct_update struct_values substr substring
        substring_grapheme subtract suffix sum sum_no_overflow sumkahan switch tan tanh time_bucket
        timetz_byte_comparable timezone timezone_hour timezone_minute to_aggregate_state to_base
        to_base64 to_binary to_centuries to_days to_decades to_hex to_hours to_json to_microseconds
        to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds to_timestamp
        to_weeks to_years translate trim trunc try_strptime typeof ucase unbin unhex unicode
        union_extract union_tag union_value unnest unpivot_list upper url_decode url_encode
        uuid_extract_timestamp uuid_extract_version var_pop var_samp variance variant_array_length
        variant_bytes_to_variant variant_comparator variant_contains variant_exists variant_extract
        variant_extract_string variant_group_array variant_group_object variant_keys
        variant_normalize variant_to_parquet_variant variant_type variant_typeof vertex_extract wavg
        week weekday weekofyear weighted_avg xor year yearweek | || ~ ~~ ~~* ~~~
        """
    )
    | _SPACED_OPERATORS,
    refused={
        "its output size is set by an argument": names(
            """
            array_resize bar format generate_series list_resize lpad printf range repeat repeat_row
            rpad
            """
        ),
        "it reads the engine, its catalogue, settings or session, not the case's data": names(
            """
            __internal_barrier __internal_compress_geometry_point
            __internal_compress_integral_ubigint __internal_compress_integral_uinteger
            __internal_compress_integral_usmallint __internal_compress_integral_utinyint
            __internal_compress_string_hugeint __internal_compress_string_ubigint
            __internal_compress_string_uhugeint __internal_compress_string_uinteger
            __internal_compress_string_usmallint __internal_compress_string_utinyint
            __internal_compressed_materialization_cast __internal_decompress_geometry_point
            __internal_decompress_integral_bigint __internal_decompress_integral_hugeint
            __internal_decompress_integral_integer __internal_decompress_integral_smallint
            __internal_decompress_integral_ubigint __internal_decompress_integral_uhugeint
            __internal_decompress_integral_uinteger __internal_decompress_integral_usmallint
            __internal_decompress_string __internal_json_copy_to_geojson
            __internal_json_copy_to_json __internal_tablefilter_bloom_filter
            __internal_tablefilter_dynamic __internal_tablefilter_optional
            __internal_tablefilter_prefix_range __internal_tablefilter_selectivity_optional
            col_description current_catalog current_database current_role current_schema
            current_schemas current_setting current_user duckdb_approx_database_count
            duckdb_available_metrics duckdb_columns duckdb_connection_count duckdb_constraints
            duckdb_coordinate_systems duckdb_databases duckdb_dependencies duckdb_dialects
            duckdb_eviction_queues duckdb_extension_repositories duckdb_extensions
            duckdb_external_file_cache duckdb_external_resource_types duckdb_external_resources
            duckdb_functions duckdb_grammar_extensions duckdb_indexes duckdb_keywords
            duckdb_live_query_metrics duckdb_log_contexts duckdb_logs duckdb_logs_parsed
            duckdb_memory duckdb_optimizers duckdb_prepared_statements duckdb_profiling_settings
            duckdb_schemas duckdb_secret_type_parameters duckdb_secret_types duckdb_secrets
            duckdb_sequences duckdb_settings duckdb_table_sample duckdb_tables
            duckdb_temporary_files duckdb_triggers duckdb_types duckdb_variables duckdb_views
            format_pg_type format_type getvariable has_any_column_privilege has_column_privilege
            has_database_privilege has_foreign_data_wrapper_privilege has_function_privilege
            has_language_privilege has_schema_privilege has_sequence_privilege has_server_privilege
            has_table_privilege has_tablespace_privilege in_search_path inet_client_addr
            inet_client_port inet_server_addr inet_server_port json_deserialize_sql
            json_serialize_plan json_serialize_sql map_to_pg_oid map_type_id_to_pg_oid
            obj_description parse_duckdb_log_message pg_collation_is_visible pg_conf_load_time
            pg_conversion_is_visible pg_function_is_visible pg_get_constraintdef pg_get_expr
            pg_get_viewdef pg_has_role pg_is_other_temp_schema pg_my_temp_schema
            pg_opclass_is_visible pg_operator_is_visible pg_opfamily_is_visible
            pg_postmaster_start_time pg_size_pretty pg_sleep pg_table_is_visible
            pg_ts_config_is_visible pg_ts_dict_is_visible pg_ts_parser_is_visible
            pg_ts_template_is_visible pg_type_is_visible pg_typeof platform pragma_collations
            pragma_database_size pragma_metadata_info pragma_platform pragma_show
            pragma_storage_info pragma_table_info pragma_user_agent pragma_version session_user
            shobj_description stats user user_agent vector_type version which_secret
            """
        ),
        "it reads the clock, the session or chance": names(
            """
            current_connection_id current_date current_localtime current_localtimestamp
            current_query current_query_id current_transaction_id currval gen_random_uuid
            get_current_time get_current_timestamp nextval now random setseed setval sleep_ms today
            transaction_timestamp txid_current uuid uuidv4 uuidv7 write_log
            """
        ),
        "it is a table function that reads files, Python objects, SQL text or the engine": names(
            """
            add_grammar_extension add_parquet_key arrow_scan arrow_scan_dumb checkpoint collations
            copy_database create_external_resource database_list database_size
            deregister_external_resource destroy_external_resource disable_checkpoint_on_shutdown
            disable_logging disable_object_cache disable_optimizer disable_print_progress_bar
            disable_profile disable_profiling disable_progress_bar disable_verification
            disable_verify_parallelism enable_checkpoint_on_shutdown enable_logging
            enable_object_cache enable_optimizer enable_print_progress_bar enable_profile
            enable_profiling enable_progress_bar enable_verification extension_versions
            force_checkpoint functions glob histogram_values icu_calendar_names import_database
            json_execute_serialized_sql metadata_info pandas_scan parquet_bloom_probe
            parquet_file_metadata parquet_full_metadata parquet_kv_metadata parquet_metadata
            parquet_page_index parquet_scan parquet_schema pg_timezone_names python_arrow_scan
            python_map_function query query_table read_blob read_csv read_csv_auto read_duckdb
            read_json read_json_auto read_json_objects read_json_objects_auto read_ndjson
            read_ndjson_auto read_ndjson_objects read_parquet read_single_csv_file
            read_single_json_file read_single_parquet_file read_text register_external_resource
            register_external_resource_type remove_grammar_extension seq_scan show show_databases
            show_tables show_tables_expanded sniff_csv storage_info summary table_info
            test_all_types test_vector_types truncate_duckdb_logs verify_parallelism
            """
        ),
    },
)

CHDB = FunctionLists(
    "chDB",
    allowed=names(
        """
        CAST CRC32 CRC32IEEE CRC64 DATE IPv4CIDRToRange IPv4NumToString IPv4NumToStringClassC
        IPv4StringToNum IPv4StringToNumOrDefault IPv4StringToNumOrNull IPv4ToIPv6 IPv6CIDRToRange
        IPv6NumToString IPv6StringToNum IPv6StringToNumOrDefault IPv6StringToNumOrNull JSONAllPaths
        JSONAllPathsWithTypes JSONAllValues JSONArrayLength JSONDynamicPaths
        JSONDynamicPathsWithTypes JSONExtract JSONExtractArrayRaw JSONExtractArrayRawCaseInsensitive
        JSONExtractBool JSONExtractBoolCaseInsensitive JSONExtractCaseInsensitive JSONExtractFloat
        JSONExtractFloatCaseInsensitive JSONExtractInt JSONExtractIntCaseInsensitive JSONExtractKeys
        JSONExtractKeysAndValues JSONExtractKeysAndValuesCaseInsensitive JSONExtractKeysAndValuesRaw
        JSONExtractKeysAndValuesRawCaseInsensitive JSONExtractKeysCaseInsensitive JSONExtractRaw
        JSONExtractRawCaseInsensitive JSONExtractString JSONExtractStringCaseInsensitive
        JSONExtractUInt JSONExtractUIntCaseInsensitive JSONHas JSONKey JSONLength JSONMergePatch
        JSONSharedDataPaths JSONSharedDataPathsWithTypes JSONType JSON_EXISTS JSON_QUERY JSON_VALUE
        L1Distance L1Norm L1Normalize L2Distance L2DistanceTransposed L2DistanceTransposedQuantized
        L2Norm L2Normalize L2SquaredDistance L2SquaredNorm LinfDistance LinfNorm LinfNormalize
        LpDistance LpNorm LpNormalize MD4 MD5 MGRSToGeo MVTBoundingBox MVTBoundingBoxMercator
        MVTEncode MVTEncodeGeom RIPEMD160 SHA1 SHA224 SHA256 SHA384 SHA512 SHA512_256 URLHash
        URLHierarchy URLPathHierarchy UTCTimestamp UTMToGeo UUIDNumToString UUIDStringToNum
        UUIDToNum UUIDv7ToDateTime YYYYMMDDToDate YYYYMMDDToDate32 YYYYMMDDhhmmssToDateTime
        YYYYMMDDhhmmssToDateTime64 _CAST __actionName __applyFilter __bitBoolMaskAnd __bitBoolMaskOr
        __bitSwapLastTwo __bitWrapperFunc __getScalar __groupingForCube __groupingForGroupingSets
        __groupingForRollup __groupingOrdinary __patchPartitionID __scalarSubqueryResult
        __toYearCalendarOnly abs accurateCast accurateCastOrDefault accurateCastOrNull acos acosh
        addDate addDays addHours addInterval addMicroseconds addMilliseconds addMinutes addMonths
        addNanoseconds addQuarters addSeconds addTupleOfIntervals addWeeks addYears age aggThrow
        alphaTokens analysisOfVariance and any anyHeavy anyLast anyLast_respect_nulls
        any_respect_nulls appendTrailingCharIfAbsent approx_top_k approx_top_sum areaCartesian
        areaSpherical argAndMax argAndMin argMax argMin array arrayAUCPR arrayAll
        arrayAutocorrelation arrayAvg arrayBottomK arrayCompact arrayConcat arrayCount arrayCumSum
        arrayCumSumNonNegative arrayDifference arrayDistinct arrayDotProduct arrayElement
        arrayElementOrNull arrayEnumerate arrayEnumerateDense arrayEnumerateDenseRanked
        arrayEnumerateUniq arrayEnumerateUniqRanked arrayExcept arrayExists arrayFill arrayFilter
        arrayFirst arrayFirstIndex arrayFirstOrNull arrayFlatten arrayFlattenedLength arrayFold
        arrayIntersect arrayJaccardIndex arrayJoin arrayLast arrayLastIndex arrayLastOrNull
        arrayLevenshteinDistance arrayLevenshteinDistanceWeighted arrayMap arrayMax arrayMin
        arrayNormalizedGini arrayPartialReverseSort arrayPartialShuffle arrayPartialSort
        arrayPopBack arrayPopFront arrayProduct arrayPushBack arrayPushFront arrayROCAUC
        arrayRandomSample arrayReduce arrayReduceInRanges arrayRemove arrayResize arrayReverse
        arrayReverseFill arrayReverseSort arrayReverseSplit arrayRotateLeft arrayRotateRight
        arrayShiftLeft arrayShiftRight arrayShingles arrayShuffle arraySimilarity arraySlice
        arraySort arraySplit arrayStringConcat arraySum arraySymmetricDifference arrayTopK
        arrayTranspose arrayUnion arrayUniq arrayWithConstant arrayZip arrayZipUnaligned ascii asin
        asinh assumeNotNull atan atan2 atanh avg avg2 avgWeighted base32Decode base32Encode
        base58Decode base58Encode base64Decode base64Encode base64URLDecode base64URLEncode basename
        bin bitAnd bitCount bitHammingDistance bitNot bitOr bitPositionsToArray bitRotateLeft
        bitRotateRight bitShiftLeft bitShiftRight bitSlice bitTest bitTestAll bitTestAny bitXor
        bitmapAnd bitmapAndCardinality bitmapAndnot bitmapAndnotCardinality bitmapBuild
        bitmapCardinality bitmapContains bitmapHasAll bitmapHasAny bitmapMax bitmapMin bitmapOr
        bitmapOrCardinality bitmapSubsetInRange bitmapSubsetLimit bitmapToArray bitmapTransform
        bitmapXor bitmapXorCardinality bitmaskToArray bitmaskToList boundingRatio
        byteHammingDistance byteSize byteSwap caseFoldUTF8 caseWithExpression
        categoricalInformationValue cbrt ceil changeDay changeHour changeMinute changeMonth
        changeSecond changeYear char chdb cityHash64 clamp coalesce compareSubstrings concat
        concatAssumeInjective concatWithSeparator concatWithSeparatorAssumeInjective contingency
        conv convertCharset corr corrMatrix corrStable cos cosh cosineDistance
        cosineDistanceTransposed cosineDistanceTransposedQuantized count countDigits countEqual
        countMatches countMatchesCaseInsensitive countSubstrings countSubstringsCaseInsensitive
        countSubstringsCaseInsensitiveUTF8 covarPop covarPopMatrix covarPopStable covarSamp
        covarSampMatrix covarSampStable cramersV cramersVBiasCorrected cume_dist cutFragment cutIPv6
        cutQueryString cutQueryStringAndFragment cutToFirstSignificantSubdomain
        cutToFirstSignificantSubdomainCustom cutToFirstSignificantSubdomainCustomRFC
        cutToFirstSignificantSubdomainCustomWithWWW cutToFirstSignificantSubdomainCustomWithWWWRFC
        cutToFirstSignificantSubdomainRFC cutToFirstSignificantSubdomainWithWWW
        cutToFirstSignificantSubdomainWithWWWRFC cutURLParameter cutWWW damerauLevenshteinDistance
        dateDiff dateName dateTime64ToSnowflakeID dateTimeToSnowflakeID dateTimeToUUIDv7 dateTrunc
        decodeHTMLComponent decodeURLComponent decodeURLFormComponent decodeXMLComponent
        defaultValueOfArgumentType defaultValueOfTypeName degrees deltaSum deltaSumTimestamp
        denseRank dequantizeInt8ToBFloat16 distinctDynamicTypes distinctJSONPaths
        distinctJSONPathsAndTypes divide divideDecimal divideOrNull domain domainRFC
        domainWithoutWWW domainWithoutWWWRFC dotProduct dotProductTransposed
        dotProductTransposedQuantized dynamicElement dynamicType e editDistance editDistanceUTF8
        empty emptyArrayDate emptyArrayDateTime emptyArrayFloat32 emptyArrayFloat64 emptyArrayInt16
        emptyArrayInt32 emptyArrayInt64 emptyArrayInt8 emptyArrayString emptyArrayToSingle
        emptyArrayUInt16 emptyArrayUInt32 emptyArrayUInt64 emptyArrayUInt8 encodeURLComponent
        encodeURLFormComponent encodeXMLComponent endsWith endsWithCaseInsensitive
        endsWithCaseInsensitiveUTF8 endsWithUTF8 entropy equals erf erfc estimateCompressionRatio
        exp exp10 exp2 exponentialMovingAverage exponentialTimeDecayedAvg
        exponentialTimeDecayedCount exponentialTimeDecayedMax exponentialTimeDecayedSum extract
        extractAll extractAllGroupsHorizontal extractAllGroupsVertical extractGroups
        extractKeyValuePairs extractKeyValuePairsWithEscaping extractTextFromHTML
        extractURLParameter extractURLParameterNames extractURLParameters factorial
        farmFingerprint64 farmHash64 finalizeAggregation financialInternalRateOfReturn
        financialInternalRateOfReturnExtended financialNetPresentValue
        financialNetPresentValueExtended firstLine firstNonDefault firstSignificantSubdomain
        firstSignificantSubdomainCustom firstSignificantSubdomainCustomRFC
        firstSignificantSubdomainRFC flameGraph flattenTuple floor format formatDateTime
        formatDateTimeInJodaSyntax formatReadableDecimalSize formatReadableQuantity
        formatReadableSize formatReadableTimeDelta formatRow formatRowNoNewline fragment
        fromDaysSinceYearZero fromDaysSinceYearZero32 fromModifiedJulianDay
        fromModifiedJulianDayOrNull fromUTCTimestamp fromUnixTimestamp fromUnixTimestamp64Micro
        fromUnixTimestamp64Milli fromUnixTimestamp64Nano fromUnixTimestamp64Second
        fromUnixTimestampInJodaSyntax gccMurmurHash gcd geoDistance geoToH3 geoToMGRS geoToUTM
        geohashDecode geohashEncode geohashesInBox geometryIntersectCartesian
        geometryIntersectSpherical getSizeOfEnumType getSubcolumn gini globalIn globalInIgnoreSet
        globalNotIn globalNotInIgnoreSet globalNotNullIn globalNotNullInIgnoreSet globalNullIn
        globalNullInIgnoreSet greatCircleAngle greatCircleDistance greater greaterOrEquals greatest
        groupArray groupArrayInsertAt groupArrayIntersect groupArrayLast groupArrayMovingAvg
        groupArrayMovingSum groupArraySample groupArraySorted groupBitAnd groupBitOr groupBitXor
        groupBitmap groupBitmapAnd groupBitmapOr groupBitmapXor groupConcat groupFormat
        groupNumericIndexedVector groupUniqArray h3CellAreaM2 h3CellAreaRads2 h3Distance h3EdgeAngle
        h3EdgeLengthKm h3EdgeLengthM h3ExactEdgeLengthKm h3ExactEdgeLengthM h3ExactEdgeLengthRads
        h3GetBaseCell h3GetDestinationIndexFromUnidirectionalEdge h3GetFaces
        h3GetIndexesFromUnidirectionalEdge h3GetOriginIndexFromUnidirectionalEdge
        h3GetPentagonIndexes h3GetRes0Indexes h3GetResolution h3GetUnidirectionalEdge
        h3GetUnidirectionalEdgeBoundary h3GetUnidirectionalEdgesFromHexagon h3HexAreaKm2 h3HexAreaM2
        h3HexRing h3IndexesAreNeighbors h3IsPentagon h3IsResClassIII h3IsValid h3Line h3NumHexagons
        h3PointDistKm h3PointDistM h3PointDistRads h3PolygonToCells h3PolygonToCellsWithContainment
        h3ToCenterChild h3ToChildren h3ToGeo h3ToGeoBoundary h3ToParent h3ToString
        h3UnidirectionalEdgeIsValid h3kRing halfMD5 has hasAll hasAllTokens hasAny hasAnyTokens
        hasPhrase hasSubsequence hasSubsequenceCaseInsensitive hasSubsequenceCaseInsensitiveUTF8
        hasSubsequenceUTF8 hasSubstr hasToken hasTokenCaseInsensitive hasTokenCaseInsensitiveOrNull
        hasTokenOrNull hex hierarchicalKMeans highlight hilbertDecode hilbertEncode histogram
        hiveHash hop hopEnd hopStart hypot icebergHash identity if ifNotFinite ifNull ignore ilike
        in inIgnoreSet indexHint indexOf indexOfAssumeSorted initcap initcapUTF8
        initializeAggregation intDiv intDivOrNull intDivOrZero intExp10 intExp2 intHash32 intHash64
        intervalLengthSum isConstant isDecimalOverflow isDistinctFrom isDynamicElementInSharedData
        isFinite isIPAddressInRange isIPv4String isIPv6String isInfinite isNaN isNotDistinctFrom
        isNotNull isNull isNullable isPrime isProbablePrime isValidASCII isValidJSON isValidUTF8
        isZeroOrNull jaroSimilarity jaroWinklerSimilarity javaHash javaHashUTF16LE
        jumpConsistentHash kafkaMurmurHash keccak256 kolmogorovSmirnovTest kostikConsistentHash
        kqlBin kqlBinAt kqlDateTimeBinAt kqlDivide kqlMultiply kqlParameterCast kqlRangeCount
        kqlToTimespan kurtPop kurtSamp lag lagInFrame largestTriangleThreeBuckets lcm lead
        leadInFrame least left leftPad leftPadUTF8 leftUTF8 length lengthUTF8 less lessOrEquals
        lgamma like localtime locate log log10 log1p log2 lower lowerUTF8 makeDate makeDate32
        makeDateTime makeDateTime64 mannWhitneyUTest map mapAdd mapAll mapApply mapConcat
        mapContainsKey mapContainsKeyLike mapContainsValue mapContainsValueLike mapExists
        mapExtractKeyLike mapExtractValueLike mapFilter mapFromArrays mapKeys mapPartialReverseSort
        mapPartialSort mapPopulateSeries mapReverseSort mapSort mapSubtract mapUpdate mapValues
        match matchCaseInsensitive materialize max max2 maxIntersections maxIntersectionsPosition
        maxMappedArrays meanZTest mergedJSONPatch metroHash64 midpoint min min2 minMappedArrays
        minus modulo moduloLegacy moduloOrNull moduloOrZero monthName mortonDecode mortonEncode
        multiFuzzyMatchAllIndices multiFuzzyMatchAny multiFuzzyMatchAnyIndex multiIf
        multiMatchAllIndices multiMatchAny multiMatchAnyIndex multiSearchAllPositions
        multiSearchAllPositionsCaseInsensitive multiSearchAllPositionsCaseInsensitiveUTF8
        multiSearchAllPositionsUTF8 multiSearchAny multiSearchAnyCaseInsensitive
        multiSearchAnyCaseInsensitiveUTF8 multiSearchAnyUTF8 multiSearchFirstIndex
        multiSearchFirstIndexCaseInsensitive multiSearchFirstIndexCaseInsensitiveUTF8
        multiSearchFirstIndexUTF8 multiSearchFirstPosition multiSearchFirstPositionCaseInsensitive
        multiSearchFirstPositionCaseInsensitiveUTF8 multiSearchFirstPositionUTF8 multiply
        multiplyDecimal murmurHash2_32 murmurHash2_64 murmurHash3_128 murmurHash3_32 murmurHash3_64
        naiveBayesNgrams naturalSortKey negate neighbor nested netloc ngramDistance
        ngramDistanceCaseInsensitive ngramDistanceCaseInsensitiveUTF8 ngramDistanceUTF8 ngramMinHash
        ngramMinHashArg ngramMinHashArgCaseInsensitive ngramMinHashArgCaseInsensitiveUTF8
        ngramMinHashArgUTF8 ngramMinHashCaseInsensitive ngramMinHashCaseInsensitiveUTF8
        ngramMinHashUTF8 ngramSearch ngramSearchCaseInsensitive ngramSearchCaseInsensitiveUTF8
        ngramSearchUTF8 ngramSimHash ngramSimHashCaseInsensitive ngramSimHashCaseInsensitiveUTF8
        ngramSimHashUTF8 ngrams nonNegativeDerivative normalizeUTF8NFC normalizeUTF8NFD
        normalizeUTF8NFKC normalizeUTF8NFKCCasefold normalizeUTF8NFKD not notEmpty notEquals notHas
        notILike notIn notInIgnoreSet notLike notMatch notMatchCaseInsensitive notNullIn
        notNullInIgnoreSet nothing nothingNull nothingUInt64 nth_value ntile nullIf nullIn
        nullInIgnoreSet numericIndexedVectorAllValueSum numericIndexedVectorBuild
        numericIndexedVectorCardinality numericIndexedVectorGetValue
        numericIndexedVectorPointwiseAdd numericIndexedVectorPointwiseDivide
        numericIndexedVectorPointwiseEqual numericIndexedVectorPointwiseGreater
        numericIndexedVectorPointwiseGreaterEqual numericIndexedVectorPointwiseLess
        numericIndexedVectorPointwiseLessEqual numericIndexedVectorPointwiseMultiply
        numericIndexedVectorPointwiseNotEqual numericIndexedVectorPointwiseSubtract
        numericIndexedVectorShortDebugString numericIndexedVectorToMap or overlay overlayUTF8
        parseDateTime parseDateTime32BestEffort parseDateTime32BestEffortOrNull
        parseDateTime32BestEffortOrZero parseDateTime64 parseDateTime64BestEffort
        parseDateTime64BestEffortOrNull parseDateTime64BestEffortOrZero parseDateTime64BestEffortUS
        parseDateTime64BestEffortUSOrNull parseDateTime64BestEffortUSOrZero
        parseDateTime64InJodaSyntax parseDateTime64InJodaSyntaxOrNull
        parseDateTime64InJodaSyntaxOrZero parseDateTime64OrNull parseDateTime64OrZero
        parseDateTimeBestEffort parseDateTimeBestEffortOrNull parseDateTimeBestEffortOrZero
        parseDateTimeBestEffortUS parseDateTimeBestEffortUSOrNull parseDateTimeBestEffortUSOrZero
        parseDateTimeInJodaSyntax parseDateTimeInJodaSyntaxOrNull parseDateTimeInJodaSyntaxOrZero
        parseDateTimeOrNull parseDateTimeOrZero parseISO8601Duration parseReadableSize
        parseReadableSizeOrNull parseReadableSizeOrZero parseTimeDelta path pathFull percentRank
        perimeterCartesian perimeterSpherical pi plus pointInEllipses pointInPolygon
        polygonAreaCartesian polygonAreaSpherical polygonConvexHullCartesian
        polygonPerimeterCartesian polygonPerimeterSpherical polygonsDistanceCartesian
        polygonsDistanceSpherical polygonsEqualsCartesian polygonsIntersectCartesian
        polygonsIntersectSpherical polygonsIntersectionCartesian polygonsIntersectionSpherical
        polygonsSymDifferenceCartesian polygonsSymDifferenceSpherical polygonsUnionCartesian
        polygonsUnionSpherical polygonsWithinCartesian polygonsWithinSpherical port portRFC position
        positionCaseInsensitive positionCaseInsensitiveUTF8 positionUTF8 positiveModulo
        positiveModuloOrNull pow prettyPrintJSON printf proportionsZTest protocol quantile
        quantileBFloat16 quantileBFloat16Weighted quantileDD quantileDeterministic quantileExact
        quantileExactExclusive quantileExactHigh quantileExactInclusive quantileExactLow
        quantileExactWeighted quantileExactWeightedInterpolated quantileGK
        quantileInterpolatedWeighted quantilePrometheusHistogram quantileTDigest
        quantileTDigestWeighted quantileTiming quantileTimingWeighted quantiles quantilesBFloat16
        quantilesBFloat16Weighted quantilesDD quantilesDeterministic quantilesExact
        quantilesExactExclusive quantilesExactHigh quantilesExactInclusive quantilesExactLow
        quantilesExactWeighted quantilesExactWeightedInterpolated quantilesGK
        quantilesInterpolatedWeighted quantilesPrometheusHistogram quantilesTDigest
        quantilesTDigestWeighted quantilesTiming quantilesTimingWeighted quantizeBFloat16ToInt8
        queryString queryStringAndFragment radians range rank rankCorr readWKB readWKBLineString
        readWKBMultiLineString readWKBMultiPoint readWKBMultiPolygon readWKBPoint readWKBPolygon
        readWKT readWKTLineString readWKTMultiLineString readWKTMultiPoint readWKTMultiPolygon
        readWKTPoint readWKTPolygon readWKTRing regexpExtract regexpPosition regexpQuoteMeta
        regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
        reinterpret reinterpretAsDate reinterpretAsDateTime reinterpretAsFixedString
        reinterpretAsFloat32 reinterpretAsFloat64 reinterpretAsInt128 reinterpretAsInt16
        reinterpretAsInt256 reinterpretAsInt32 reinterpretAsInt64 reinterpretAsInt8
        reinterpretAsString reinterpretAsUInt128 reinterpretAsUInt16 reinterpretAsUInt256
        reinterpretAsUInt32 reinterpretAsUInt64 reinterpretAsUInt8 reinterpretAsUUID
        removeDiacriticsUTF8 repeat replaceAll replaceOne replaceRegexpAll replaceRegexpOne
        replicate retention reverse reverseBySeparator reverseUTF8 right rightPad rightPadUTF8
        rightUTF8 round roundAge roundBankers roundDown roundDuration roundToExp2 row_number
        runningAccumulate runningDifference runningDifferenceStartingWithFirstValue sequenceCount
        sequenceMatch sequenceMatchEvents sequenceNextNode seriesDecomposeSTL
        seriesOutliersDetectTukey sigmoid sign simpleJSONExtractBool simpleJSONExtractFloat
        simpleJSONExtractInt simpleJSONExtractRaw simpleJSONExtractString simpleJSONExtractUInt
        simpleJSONHas simpleLinearRegression sin singleValueOrNull sinh sipHash128 sipHash128Keyed
        sipHash128Reference sipHash128ReferenceKeyed sipHash64 sipHash64Keyed skewPop skewSamp
        snowflakeIDToDateTime snowflakeIDToDateTime64 soundex space sparkbar sparseGrams
        sparseGramsHashes sparseGramsHashesUTF8 sparseGramsUTF8 splitByChar splitByNonAlpha
        splitByRegexp splitByString splitByWhitespace sqidDecode sqidEncode sqr sqrt startsWith
        startsWithCaseInsensitive startsWithCaseInsensitiveUTF8 startsWithUTF8 stddevPop
        stddevPopStable stddevSamp stddevSampStable stochasticLinearRegression
        stochasticLogisticRegression stringBytesEntropy stringBytesUniq stringJaccardIndex
        stringJaccardIndexUTF8 stringToH3 studentTTest studentTTestOneSample subBitmap subDate
        substring substringIndex substringIndexUTF8 substringUTF8 subtractDays subtractHours
        subtractInterval subtractMicroseconds subtractMilliseconds subtractMinutes subtractMonths
        subtractNanoseconds subtractQuarters subtractSeconds subtractTupleOfIntervals subtractWeeks
        subtractYears sum sumCount sumKahan sumMapFiltered sumMapFilteredWithOverflow
        sumMapWithOverflow sumMappedArrays sumWithOverflow svg tan tanh tgamma theilsU throwIf
        timeDiff timeSeriesAvgToGrid timeSeriesBottomKMasks timeSeriesChangesToGrid
        timeSeriesCopyTag timeSeriesCopyTags timeSeriesCountToGrid timeSeriesDeltaToGrid
        timeSeriesDerivToGrid timeSeriesExtractTag timeSeriesFromGrid timeSeriesGroupArray
        timeSeriesGroupToSamplingKey timeSeriesGroupToTags timeSeriesIdToGroup timeSeriesIdToTags
        timeSeriesIncreaseToGrid timeSeriesInstantDeltaToGrid timeSeriesInstantRateToGrid
        timeSeriesJoinTags timeSeriesLastTwoSamples timeSeriesLimitKMasks timeSeriesMaxToGrid
        timeSeriesMetricTypeToSuffixes timeSeriesMinToGrid timeSeriesPredictLinearToGrid
        timeSeriesPrometheusValueToString timeSeriesRange timeSeriesRateToGrid
        timeSeriesRemoveAllTagsExcept timeSeriesRemoveTag timeSeriesRemoveTags timeSeriesReplaceTag
        timeSeriesResampleToGridWithStaleness timeSeriesResetsToGrid timeSeriesStoreTags
        timeSeriesSumToGrid timeSeriesTagsToGroup timeSeriesTagsToMap
        timeSeriesThrowDuplicateSeriesIf timeSeriesTimestampOfMaxToGrid
        timeSeriesTimestampOfMinToGrid timeSeriesTopKMasks timeSlot timeSlots timestamp timezoneOf
        toBFloat16 toBFloat16OrNull toBFloat16OrZero toBool toColumnTypeName toDate toDate32
        toDate32OrDefault toDate32OrNull toDate32OrZero toDateOrDefault toDateOrNull toDateOrZero
        toDateTime toDateTime32 toDateTime64 toDateTime64OrDefault toDateTime64OrNull
        toDateTime64OrZero toDateTimeOrDefault toDateTimeOrNull toDateTimeOrZero toDayOfMonth
        toDayOfWeek toDayOfYear toDaysInMonth toDaysSinceYearZero toDecimal128 toDecimal128OrDefault
        toDecimal128OrNull toDecimal128OrZero toDecimal256 toDecimal256OrDefault toDecimal256OrNull
        toDecimal256OrZero toDecimal32 toDecimal32OrDefault toDecimal32OrNull toDecimal32OrZero
        toDecimal64 toDecimal64OrDefault toDecimal64OrNull toDecimal64OrZero toDecimalString
        toFixedString toFloat32 toFloat32OrDefault toFloat32OrNull toFloat32OrZero toFloat64
        toFloat64OrDefault toFloat64OrNull toFloat64OrZero toHour toIPv4 toIPv4OrDefault
        toIPv4OrNull toIPv4OrZero toIPv6 toIPv6OrDefault toIPv6OrNull toIPv6OrZero toISOWeek
        toISOYear toInt128 toInt128OrDefault toInt128OrNull toInt128OrZero toInt16 toInt16OrDefault
        toInt16OrNull toInt16OrZero toInt256 toInt256OrDefault toInt256OrNull toInt256OrZero toInt32
        toInt32OrDefault toInt32OrNull toInt32OrZero toInt64 toInt64OrDefault toInt64OrNull
        toInt64OrZero toInt8 toInt8OrDefault toInt8OrNull toInt8OrZero toInterval toIntervalDay
        toIntervalHour toIntervalMicrosecond toIntervalMillisecond toIntervalMinute toIntervalMonth
        toIntervalNanosecond toIntervalQuarter toIntervalSecond toIntervalWeek toIntervalYear
        toJSONString toLastDayOfMonth toLastDayOfWeek toLowCardinality toMicrosecond toMillisecond
        toMinute toModifiedJulianDay toModifiedJulianDayOrNull toMonday toMonth toMonthNumSinceEpoch
        toNanosecond toNullable toQuarter toRelativeDayNum toRelativeHourNum toRelativeMinuteNum
        toRelativeMonthNum toRelativeQuarterNum toRelativeSecondNum toRelativeWeekNum
        toRelativeYearNum toSecond toStartOfDay toStartOfFifteenMinutes toStartOfFiveMinutes
        toStartOfHour toStartOfISOYear toStartOfInterval toStartOfMicrosecond toStartOfMillisecond
        toStartOfMinute toStartOfMonth toStartOfNanosecond toStartOfQuarter toStartOfSecond
        toStartOfTenMinutes toStartOfWeek toStartOfYear toString toStringCutToZero toTime toTime64
        toTime64OrNull toTime64OrZero toTimeOrNull toTimeOrZero toTimeWithFixedDate toTimezone
        toTypeName toUInt128 toUInt128OrDefault toUInt128OrNull toUInt128OrZero toUInt16
        toUInt16OrDefault toUInt16OrNull toUInt16OrZero toUInt256 toUInt256OrDefault toUInt256OrNull
        toUInt256OrZero toUInt32 toUInt32OrDefault toUInt32OrNull toUInt32OrZero toUInt64
        toUInt64OrDefault toUInt64OrNull toUInt64OrZero toUInt8 toUInt8OrDefault toUInt8OrNull
        toUInt8OrZero toUTCTimestamp toUUID toUUIDOrDefault toUUIDOrNull toUUIDOrZero
        toUnixTimestamp toUnixTimestamp64Micro toUnixTimestamp64Milli toUnixTimestamp64Nano
        toUnixTimestamp64Second toValidUTF8 toWeek toYYYYMM toYYYYMMDD toYYYYMMDDhhmmss toYear
        toYearNumSinceEpoch toYearWeek tokens tokensForLikePattern topK topKWeighted topLevelDomain
        topLevelDomainRFC transform translate translateUTF8 trimBoth trimLeft trimRight trunc
        tryBase32Decode tryBase58Decode tryBase64Decode tryBase64URLDecode tumble tumbleEnd
        tumbleStart tuple tupleConcat tupleDivide tupleDivideByNumber tupleElement
        tupleHammingDistance tupleIntDiv tupleIntDivByNumber tupleIntDivOrZero
        tupleIntDivOrZeroByNumber tupleMinus tupleModulo tupleModuloByNumber tupleMultiply
        tupleMultiplyByNumber tupleNames tupleNegate tuplePlus tuplePositiveModuloByNumber
        tupleToNameValuePairs unbin unhex uniq uniqCombined uniqCombined64 uniqExact uniqHLL12
        uniqUpTo upper upperUTF8 validateNestedArraySizes varPop varPopStable varSamp varSampStable
        variantElement variantType visibleWidth welchTTest widthBucket windowFunnel wkb wkt
        wordShingleMinHash wordShingleMinHashArg wordShingleMinHashArgCaseInsensitive
        wordShingleMinHashArgCaseInsensitiveUTF8 wordShingleMinHashArgUTF8
        wordShingleMinHashCaseInsensitive wordShingleMinHashCaseInsensitiveUTF8
        wordShingleMinHashUTF8 wordShingleSimHash wordShingleSimHashCaseInsensitive
        wordShingleSimHashCaseInsensitiveUTF8 wordShingleSimHashUTF8 wyHash64 xor xxHash32 xxHash64
        xxHash64Spark xxh3 xxh3_128
        """
    ),
    refused={
        "it tells about the host, the server, its settings, the session or the query, or reads files or other tables": names(
            """
            FQDN MACNumToString MACStringToNum MACStringToOUI authenticatedUser bar blockNumber
            blockSerializedSize blockSize buildId colorOKLABToSRGB colorOKLCHToSRGB colorSRGBToOKLAB
            colorSRGBToOKLCH connectionId currentDatabase currentHandler currentProfiles
            currentQueryID currentRequestURL currentRoles currentSchemas currentUser defaultProfiles
            defaultRoles digits displayName dumpColumnStructure enabledProfiles enabledRoles
            errorCodeToName file filesystemAvailable filesystemCapacity filesystemUnreserved
            flipCoordinates formatQuery formatQueryFromJSON formatQueryOrNull formatQuerySingleLine
            formatQuerySingleLineOrNull generateRandomStructure generateSerialID getClientHTTPHeader
            getMacro getMaxTableNameLengthForDatabase getMergeTreeSetting getOSKernelVersion
            getServerPort getServerSetting getSetting getSettingOrDefault
            getTypeSerializationStreams globalVariable hasColumnInTable hasThreadFuzzer
            highlightQuery hostName icebergBucket icebergTruncate initialQueryID
            initialQueryStartTime joinGet joinGetOrNull lowCardinalityIndices lowCardinalityKeys
            minSampleSizeContinuous minSampleSizeConversion normalizeQuery normalizeQueryKeepNames
            normalizedQueryHash normalizedQueryHashKeepNames obfuscateQuery obfuscateQueryWithSeed
            parseQueryToJSON partitionId pgGetUserById pgTableIsVisible queryID revision
            rowNumberInAllBlocks rowNumberInBlock runningConcurrency serverUUID shardCount shardNum
            showCertificate sleep sleepEachRow structureToCapnProtoSchema structureToProtobufSchema
            tcpPort tokenizeQuery transactionID transactionLatestSnapshot transactionOldestSnapshot
            uptime version zookeeperSessionUptime
            """
        ),
        "it encrypts or decrypts with keys: no analysis here needs it": names(
            """
            HMAC aes_decrypt_mysql aes_encrypt_mysql decrypt encrypt tryDecrypt
            """
        ),
        "it reads the clock, the server's time zone or chance": names(
            """
            fuzzBits fuzzQuery generateSnowflakeID generateUUIDv4 generateUUIDv7 now now64
            nowInBlock nowInBlock64 rand rand64 randBernoulli randBinomial randCanonical
            randChiSquared randConstant randExponential randFisherF randLogNormal
            randNegativeBinomial randNormal randPoisson randStudentT randUniform randomFixedString
            randomHadamardTransform randomPrintableASCII randomString randomStringUTF8
            serverTimezone timezone timezoneOffset today yesterday
            """
        ),
        "it calls an AI provider over the network": names(
            """
            aiClassify aiEmbed aiExtract aiFilter aiGenerate aiRedact aiSimilarity aiTranslate
            """
        ),
        "it reads the server's own code, threads or parts": names(
            """
            addressToLine addressToLineWithInlines addressToSymbol demangle isMergeTreePartCoveredBy
            logTrace mergeTreePartInfo tid
            """
        ),
        "it reads the server's dictionaries, not the case's tables": names(
            """
            dictGet dictGetAll dictGetChildren dictGetDate dictGetDateOrDefault dictGetDateTime
            dictGetDateTimeOrDefault dictGetDescendants dictGetFloat32 dictGetFloat32OrDefault
            dictGetFloat64 dictGetFloat64OrDefault dictGetHierarchy dictGetIPv4 dictGetIPv4OrDefault
            dictGetIPv6 dictGetIPv6OrDefault dictGetInt16 dictGetInt16OrDefault dictGetInt32
            dictGetInt32OrDefault dictGetInt64 dictGetInt64OrDefault dictGetInt8
            dictGetInt8OrDefault dictGetKeys dictGetOrDefault dictGetOrNull dictGetRoot
            dictGetString dictGetStringOrDefault dictGetUInt16 dictGetUInt16OrDefault dictGetUInt32
            dictGetUInt32OrDefault dictGetUInt64 dictGetUInt64OrDefault dictGetUInt8
            dictGetUInt8OrDefault dictGetUUID dictGetUUIDOrDefault dictHas dictIsIn regionHierarchy
            regionIn regionToArea regionToCity regionToContinent regionToCountry regionToDistrict
            regionToName regionToPopulation regionToTopContinent
            """
        ),
        "it evaluates models stored in the server": names(
            """
            assignCentroid evalMLMethod naiveBayesClassifier naiveBayesClassifierWithAllProbs
            naiveBayesClassifierWithProb
            """
        ),
    },
    fold_case=False,
)


def chdb_aggregate(name: str, combinators: frozenset[str]) -> str:
    """The aggregate an aggregate function's name combines: ``sumIfState`` is ``sum``.

    ``combinators`` are the engine's own (``system.aggregate_function_combinators``); a
    name that is itself on a list is kept whole.
    """
    while not CHDB.allows(name) and name not in CHDB.refused_names():
        for suffix in sorted(combinators, key=len, reverse=True):
            if name.endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
                break
        else:
            return name
    return name


__all__ = ["CHDB", "DUCKDB", "chdb_aggregate"]
