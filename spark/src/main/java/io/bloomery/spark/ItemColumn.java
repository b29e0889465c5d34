package io.bloomery.spark;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;

/**
 * A Dataset column whose values are filter items, encoded exactly as the library encodes them: a
 * string column as its UTF-8 bytes (Spark holds strings as UTF-8, so the bytes read from a text file
 * pass through undecoded and unnormalised), a binary column as its bytes, a long column as its 8
 * little-endian bytes ({@code MembershipFilter.add(long)}). Any other type is refused by name.
 */
final class ItemColumn implements Serializable {
  private static final long serialVersionUID = 1L;

  enum Type { STRING, BINARY, LONG }

  final String name;
  final Type type;
  final FilterSpec.Nulls nulls;

  private ItemColumn(String name, Type type, FilterSpec.Nulls nulls) {
    this.name = name;
    this.type = type;
    this.nulls = nulls;
  }

  /** Values handed over one by one (an aggregator's or a UDF's input), named {@code what} in errors. */
  static ItemColumn forValues(String what, FilterSpec.Nulls nulls) {
    return new ItemColumn(what, null, nulls);
  }

  /** Resolves {@code column} in {@code dataset}, refusing a missing column or an unsupported type. */
  static ItemColumn resolve(Dataset<?> dataset, String column, FilterSpec.Nulls nulls) {
    DataType type;
    try {
      type = dataset.select(dataset.col(column)).schema().fields()[0].dataType();
    } catch (Exception e) { // AnalysisException is checked in Scala's eyes only
      if (!(e instanceof AnalysisException)) {
        throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
      }
      throw new BloomerySparkException("no column '" + column + "' in the dataset (columns: "
          + String.join(", ", Arrays.asList(dataset.columns())) + ")", e);
    }
    return new ItemColumn(column, typeOf("column '" + column + "'", type), nulls);
  }

  /** The item type of a value of {@code type}, or an error that names it as {@code what}. */
  static Type typeOf(String what, DataType type) {
    if (type instanceof StringType) {
      return Type.STRING;
    }
    if (type instanceof BinaryType) {
      return Type.BINARY;
    }
    if (type instanceof LongType) {
      return Type.LONG;
    }
    throw new BloomerySparkException(what + " is of type " + type.simpleString()
        + "; filter items come from string, binary or bigint columns (cast it, for example to string)");
  }

  /** The column's values as single-field internal rows (reused by Spark: read each before the next). */
  JavaRDD<InternalRow> rows(Dataset<?> dataset) {
    Column column = dataset.col(name);
    return dataset.select(column).queryExecution().toRdd().toJavaRDD();
  }

  /**
   * The column as a UDF should receive it: a string column cast to binary, which is its UTF-8 bytes
   * as Spark holds them (a UDF handed the string would get it decoded, and text that is not valid
   * UTF-8 would come back as other bytes); binary and bigint columns as they are.
   */
  Column itemColumn(Dataset<?> dataset) {
    Column column = dataset.col(name);
    return type == Type.STRING ? column.cast(org.apache.spark.sql.types.DataTypes.BinaryType) : column;
  }

  /**
   * The item bytes of field 0 of {@code row}, or null for a null value under {@link
   * FilterSpec.Nulls#SKIP}; {@code scratch} is an 8-byte array reused for long items.
   *
   * @throws BloomerySparkException for a null value under {@link FilterSpec.Nulls#REFUSE}
   */
  byte[] bytes(InternalRow row, byte[] scratch) {
    if (row.isNullAt(0)) {
      return nullItem();
    }
    switch (type) {
      case STRING:
        return row.getUTF8String(0).getBytes();
      case BINARY:
        return row.getBinary(0);
      default:
        return littleEndian(row.getLong(0), scratch);
    }
  }

  /** The item bytes of a value Spark handed to a UDF (String, byte[] or Long), as {@link #bytes}. */
  byte[] bytesOfValue(Object value) {
    if (value == null) {
      return nullItem();
    }
    if (value instanceof String text) {
      return text.getBytes(StandardCharsets.UTF_8);
    }
    if (value instanceof byte[] binary) {
      return binary;
    }
    if (value instanceof Long number) {
      return littleEndian(number, new byte[Long.BYTES]);
    }
    throw new BloomerySparkException(describe() + " is a " + value.getClass().getSimpleName()
        + "; expected string, binary or bigint values");
  }

  private byte[] nullItem() {
    if (nulls == FilterSpec.Nulls.SKIP) {
      return null;
    }
    throw new BloomerySparkException(describe() + " holds a null; a null is not an item "
        + "(filter it out, or skip nulls explicitly with FilterSpec.Nulls.SKIP / --skip-nulls)");
  }

  private String describe() {
    return type == null ? name : "column '" + name + "'";
  }

  static byte[] littleEndian(long value, byte[] into) {
    for (int i = 0; i < Long.BYTES; i++) {
      into[i] = (byte) (value >>> (8 * i));
    }
    return into;
  }

  @Override
  public String toString() {
    return name + " (" + type.name().toLowerCase(Locale.ROOT) + ")";
  }
}
